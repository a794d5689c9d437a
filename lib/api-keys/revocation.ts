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
