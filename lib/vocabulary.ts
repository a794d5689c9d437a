// Every closed set of words the domain uses, declared once. joi route schemas
// (`Joi.string().valid(...X)`), zod rows (`z.enum(X)`), the OpenAPI document,
// the event catalog and the SDK's types all derive from these arrays, and the
// SQL `CHECK (column IN (...))` constraints are compared with them by
// test/vocabulary.test.ts, so a word added here and not in a migration (or the
// reverse) fails the suite. A family's own words, which no other family uses,
// live in its folder (lib/<family>/vocabulary.ts), and its declaration names the
// CHECK each backs (`vocabulary` in lib/family.ts). Larger vocabularies that carry policy with them
// live beside that policy and are declared there once: scopes in
// lib/api-keys/scopes.ts, event types in lib/events/catalog.ts.

/** Where a key, and everything it creates, lives (spec: Environments). */
export const ENVIRONMENTS = ['live', 'test', 'sandbox'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/**
 * A transfer's public status (spec: Transfers). The spec has no word for
 * "still uploading": such a transfer is `scanning`, and `status_reason`
 * (`uploading`, then `scanning`) says which; see lib/transfers/phase.ts.
 */
export const TRANSFER_STATUSES = ['active', 'expired', 'deleted', 'scanning'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** `server`: AES-256-GCM at rest with a key we hold sealed; `e2e`: the key never reaches us. */
export const ENCRYPTION_MODES = ['server', 'e2e'] as const;
export type EncryptionMode = (typeof ENCRYPTION_MODES)[number];

/** A transfer's approval, null when it needs none. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** What an approver decided. */
export const APPROVAL_DECISIONS = ['approved', 'rejected'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/**
 * What the malware scan says of a file, and of its transfer (the weakest of its
 * files): `not_scanned_too_large` when clamd could not read all of a file (its
 * stream, file or scan size, or archive nesting limits), `not_scanned_e2e` for
 * ciphertext.
 */
export const SCAN_STATUSES = ['pending', 'clean', 'infected', 'not_scanned_too_large', 'not_scanned_e2e'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

/** A file's upload. */
export const UPLOAD_STATES = ['pending', 'uploading', 'uploaded'] as const;
export type UploadState = (typeof UPLOAD_STATES)[number];

/** `full` keys hold every scope; `restricted` keys hold the scopes they list. */
export const KEY_TYPES = ['full', 'restricted'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** Why a key was revoked (`DELETE /v1/api-keys/{id}`, body or query `reason`). */
export const REVOCATION_REASONS = [
  'manual',
  'compromised',
  'rotated',
  'suspicious_activity',
  'unused',
  'other',
] as const;
export type RevocationReason = (typeof REVOCATION_REASONS)[number];

/** A workspace member's role. */
export const MEMBER_ROLES = ['owner', 'admin', 'member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** Whether an audited request succeeded. */
export const AUDIT_OUTCOMES = ['success', 'failure'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** An idempotency record: the first request is still running, or its response is stored. */
export const IDEMPOTENCY_STATES = ['in_progress', 'completed'] as const;
export type IdempotencyState = (typeof IDEMPOTENCY_STATES)[number];

/** A webhook delivery (one event to one endpoint, over its attempts). */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What started a delivery attempt: the retry schedule, a redelivery, or a test ping. */
export const DELIVERY_TRIGGERS = ['scheduled', 'manual', 'test'] as const;
export type DeliveryTrigger = (typeof DELIVERY_TRIGGERS)[number];

/** What a rule does when it matches (spec: Automation rules, action_type). */
export const RULE_ACTION_TYPES = [
  'webhook',
  'trigger_webhook',
  'slack_notify',
  'email_recipient',
  'email_workspace',
  'tag_transfer',
  'untag_transfer',
  'extend_expiry',
  'archive_transfer',
] as const;
export type RuleActionType = (typeof RULE_ACTION_TYPES)[number];

/** One run of a rule's action. */
export const RULE_EXECUTION_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;
export type RuleExecutionStatus = (typeof RULE_EXECUTION_STATUSES)[number];

/** Why a recipient cannot download a transfer right now (GET /v1/shares/{token}, `blocked_reason`). */
export const BLOCKED_REASONS = [
  'uploading',
  'scanning',
  'awaiting_approval',
  'rejected',
  'limit_reached',
  'expired',
  'revoked',
  'infected',
  'upload_incomplete',
  'scan_failed',
] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

/**
 * Why a file could not be verified for good, so its transfer was ended (`transfer.scan_failed`):
 * its plaintext no longer matches the checksum taken at upload, its stored ciphertext fails
 * authentication, its stored object is not the size uploaded, or another permanent fault.
 */
export const SCAN_FAILURES = ['checksum_mismatch', 'content_corrupt', 'size_mismatch', 'other'] as const;
export type ScanFailure = (typeof SCAN_FAILURES)[number];

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

/** What a collection can hold (docs/collections.md): transfers for now; vault items may follow. */
export const COLLECTION_ITEM_KINDS = ['transfer'] as const;
export type CollectionItemKind = (typeof COLLECTION_ITEM_KINDS)[number];

/** What a `collection.updated` event says changed. */
export const COLLECTION_CHANGES = ['title', 'description', 'share_link'] as const;
export type CollectionChange = (typeof COLLECTION_CHANGES)[number];

/**
 * How a visitor of a collection's link can download one of its transfers: `open` (files listed),
 * `password` (the transfer's password first), `own_link` (end-to-end: only its own link holds the key).
 */
export const COLLECTION_ACCESS = ['open', 'password', 'own_link'] as const;
export type CollectionAccess = (typeof COLLECTION_ACCESS)[number];

/** Membership test that narrows: `isOneOf(ENVIRONMENTS, value)`. */
export function isOneOf<const T extends readonly string[]>(vocabulary: T, value: unknown): value is T[number] {
  return typeof value === 'string' && (vocabulary as readonly string[]).includes(value);
}

/** How an address-book entry came to be: created through the API, or from a transfer's recipients. */
export const RECIPIENT_SOURCES = ['api', 'transfer'] as const;
export type RecipientSource = (typeof RECIPIENT_SOURCES)[number];

/** A vault's state (docs/coffres.md): `expired` and `deleted` vaults have shredded their items. */
export const COFFRE_STATUSES = ['active', 'expired', 'deleted'] as const;
export type CoffreStatus = (typeof COFFRE_STATUSES)[number];

/** What a vault member may do: `view` lists, `download` also downloads, `upload` also adds items. */
export const COFFRE_ACCESS_LEVELS = ['view', 'download', 'upload'] as const;
export type CoffreAccessLevel = (typeof COFFRE_ACCESS_LEVELS)[number];

/** A vault item's state: uploaded, then scanned; `rejected` (infected) and `deleted` items are shredded. */
export const COFFRE_ITEM_STATUSES = ['uploading', 'scanning', 'available', 'rejected', 'deleted'] as const;
export type CoffreItemStatus = (typeof COFFRE_ITEM_STATUSES)[number];

/** Who an access-log entry names: a member (by their invitation) or the owner's API key. */
export const COFFRE_ACTOR_TYPES = ['member', 'api_key'] as const;
export type CoffreActorType = (typeof COFFRE_ACTOR_TYPES)[number];

/** What an access-log entry records. */
export const COFFRE_ACTIONS = ['opened', 'listed', 'downloaded', 'uploaded'] as const;
export type CoffreAction = (typeof COFFRE_ACTIONS)[number];
