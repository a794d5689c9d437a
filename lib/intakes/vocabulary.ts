// The intakes family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/**
 * An intake accepts submissions while `open`; it is `closed` by its owner or on reaching
 * `max_submissions`, `expired` once its `expires_at` passes, and `deleted` (a tombstone no route
 * shows) once its owner deleted it.
 */
export const INTAKE_STATUSES = ['open', 'closed', 'expired', 'deleted'] as const;
export type IntakeStatus = (typeof INTAKE_STATUSES)[number];

/** Why a closed intake closed. */
export const INTAKE_CLOSE_REASONS = ['owner', 'max_submissions'] as const;
export type IntakeCloseReason = (typeof INTAKE_CLOSE_REASONS)[number];

/**
 * `server`: files sealed at rest with a key we hold, and scanned; `e2e_asym`: the submitter encrypts
 * to the owner's public key (docs/intake-encryption.md) and we never hold a key that opens them.
 */
export const INTAKE_ENCRYPTION_MODES = ['server', 'e2e_asym'] as const;
export type IntakeEncryptionMode = (typeof INTAKE_ENCRYPTION_MODES)[number];

/** The HPKE KEMs an intake's owner key may use; X-Wing (post-quantum hybrid) first, the default. */
export const INTAKE_KEMS = ['MLKEM768-X25519', 'DHKEM-X25519'] as const;
export type IntakeKem = (typeof INTAKE_KEMS)[number];

/** Whether an intake keeps the free-form `metadata` a submitter sends. */
export const METADATA_POLICIES = ['allow', 'deny'] as const;
export type MetadataPolicy = (typeof METADATA_POLICIES)[number];

/**
 * An intake document's status (spec: `received`, `processing`; the rest is ours, docs/intakes.md):
 * `uploading` until every file is stored, `received` once it is (final for end-to-end documents,
 * which cannot be scanned), then in server mode `processing` while scanned and `available` or
 * `rejected` (infected, content destroyed); `deleted` once retention or the owner removed it.
 */
export const INTAKE_DOCUMENT_STATUSES = [
  'uploading',
  'received',
  'processing',
  'available',
  'rejected',
  'deleted',
] as const;
export type IntakeDocumentStatus = (typeof INTAKE_DOCUMENT_STATUSES)[number];

/** How a document was submitted: the intake's page, or the API with a publishable key. */
export const INTAKE_SOURCES = ['widget', 'api'] as const;
export type IntakeSource = (typeof INTAKE_SOURCES)[number];
