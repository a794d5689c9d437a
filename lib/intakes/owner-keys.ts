import { createIntakeQueries } from '../db/queries/intakes.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { issuePublishableKey, presentPublishableKey } from './publishable-keys.ts';
import { findIntake } from './service.ts';

// An intake's publishable keys, as its owner manages them. They are meant to
// be embedded in pages, so the owner may read their values again.

export type CreatePublishableKeyInput = { label?: string | null | undefined };

export async function createPublishableKey(
  services: Services,
  caller: Caller,
  intakeId: string,
  input: CreatePublishableKeyInput,
) {
  const row = await services.db.transaction(async (tx) => {
    const queries = createIntakeQueries(tx);
    const intake = await queries.find(tenantOf(caller), intakeId, true);
    if (!intake) throw new DomainError('not_found', 'No such intake.');
    // An empty label is no label (the route takes "" as a form field left blank).
    return issuePublishableKey(services, queries, intake, input.label || null);
  });
  return presentPublishableKey(services, row);
}

export async function listPublishableKeys(services: Services, caller: Caller, intakeId: string) {
  const intake = await findIntake(services, caller, intakeId);
  const rows = await createIntakeQueries(services.db).keys(intake.id);
  const data = rows.map((row) => presentPublishableKey(services, row));
  // Few per intake: one page holds them all.
  return { object: 'list' as const, data, has_more: false, next_cursor: null, limit: 100, offset: null };
}

/** Revokes a key: it stops working at once. Revoking it again answers the same. */
export async function revokePublishableKey(services: Services, caller: Caller, intakeId: string, keyId: string) {
  const intake = await findIntake(services, caller, intakeId);
  const row = await createIntakeQueries(services.db).revokeKey(intake.id, keyId);
  if (!row) throw new DomainError('not_found', 'No such publishable key on this intake.');
  return presentPublishableKey(services, row);
}
