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

/** Membership test that narrows: `isOneOf(ENVIRONMENTS, value)`. */
export function isOneOf<const T extends readonly string[]>(vocabulary: T, value: unknown): value is T[number] {
  return typeof value === 'string' && (vocabulary as readonly string[]).includes(value);
}
