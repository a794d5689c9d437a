import { bearerValue } from '../api-keys/bearer.ts';
import { constantTimeEqual, hmacSha256, randomBase62, seal, unseal } from '../crypto/secrets.ts';
import { createIntakeQueries, type IntakeRow, type PublishableKeyRow } from '../db/queries/intakes.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Tenant } from '../tenancy.ts';
import { ENVIRONMENTS, type Environment, isOneOf } from '../vocabulary.ts';
import { intakePageLink } from './present.ts';

// Publishable keys (`cip_<env>_…`, docs/intakes.md): made to sit in a web
// page, so each can do one thing: submit to its own intake. They are looked up
// by an HMAC of the value, and kept sealed (AES-256-GCM, bound to the key's
// intake) so that the owner can read them again to embed them.

const SECRET_LENGTH = 32;
const KEY_PATTERN = new RegExp(`^cip_(${ENVIRONMENTS.join('|')})_[0-9A-Za-z]{${SECRET_LENGTH}}$`);

export type PublishableKeyView = ReturnType<typeof presentPublishableKey>;

export function presentPublishableKey(services: Services, row: PublishableKeyRow) {
  const key = unseal(services.keys.seal, row.key_sealed, sealContext(row.intake_id));
  return {
    id: row.id,
    object: 'publishable_key' as const,
    intake_id: row.intake_id,
    // Keys created with "" before it was stored as no label: shown as none too.
    label: row.label || null,
    key,
    key_prefix: row.key_prefix,
    page_url: intakePageLink(services.config, row.intake_id, key),
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

/** Issues a publishable key for `intake`; call it on the transaction that needs it. */
export async function issuePublishableKey(
  services: Services,
  queries: ReturnType<typeof createIntakeQueries>,
  intake: IntakeRow,
  label: string | null,
): Promise<PublishableKeyRow> {
  const value = `cip_${intake.environment}_${randomBase62(SECRET_LENGTH)}`;
  return queries.insertKey({
    workspaceId: intake.workspace_id,
    environment: intake.environment,
    intakeId: intake.id,
    label,
    hash: hashOf(services, value),
    sealed: seal(services.keys.seal, value, sealContext(intake.id)),
    prefix: value.slice(0, `cip_${intake.environment}_`.length + 6),
  });
}

/** Who submits: an intake's publishable key, for that intake only. */
export type Submitter = Tenant & { intakeId: string; publishableKeyId: string };

/**
 * Resolves the `Authorization` header of a request to `intakeId`'s submitter routes. A key of
 * another intake answers 404, as if the intake did not exist: a page's key must not reveal which
 * other intakes are there.
 */
export async function authenticateSubmitter(
  services: Services,
  header: string | undefined,
  intakeId: string,
): Promise<Submitter> {
  const value = bearerValue(header, { name: 'publishable key', placeholder: 'cip_…' });
  const environment = environmentOf(value);
  if (!environment) throw new DomainError('invalid_api_key', 'The publishable key is malformed.');
  const hash = hashOf(services, value);
  const queries = createIntakeQueries(services.db);
  const key = await queries.keyByHash(hash);
  if (!key || !constantTimeEqual(Buffer.from(key.key_hash), Buffer.from(hash)) || key.environment !== environment) {
    throw new DomainError('invalid_api_key', 'The publishable key is not valid.');
  }
  if (key.revoked_at) throw new DomainError('revoked_api_key', 'This publishable key has been revoked.');
  if (key.intake_id !== intakeId) throw new DomainError('not_found', 'No such intake.');
  await queries.touchKey(key.id);
  return {
    workspaceId: key.workspace_id,
    environment: key.environment,
    intakeId: key.intake_id,
    publishableKeyId: key.id,
  };
}

function environmentOf(value: string): Environment | null {
  if (!KEY_PATTERN.test(value)) return null;
  const environment = value.split('_')[1];
  return isOneOf(ENVIRONMENTS, environment) ? environment : null;
}

function hashOf(services: Services, value: string): string {
  return hmacSha256(services.keys.apiKeyPepper, value).toString('hex');
}

function sealContext(intakeId: string): string {
  return `intake-publishable-key:${intakeId}`;
}
