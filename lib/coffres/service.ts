import { type CoffreRow, createCoffreQueries } from '../db/queries/coffres.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { DomainError, notFound } from '../errors.ts';
import { coffreView } from '../events/coffre-events.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';
import { newCoffreId } from './ids.ts';
import { presentAccess, presentCoffre } from './present.ts';

// Vaults as their owner manages them (docs/coffres.md). Members are in
// members.ts, items in items.ts, what members do with their link in access.ts.

export type Tx = Parameters<Parameters<Services['db']['transaction']>[0]>[0];

export type CreateCoffreInput = {
  name: string;
  description?: string | null | undefined;
  expires_at?: Date | undefined;
};

function checkExpiry(expiresAt: Date | null | undefined) {
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw new DomainError('validation_error', '`expires_at` must be in the future.', { param: 'expires_at' });
  }
}

export async function createCoffre(services: Services, caller: Caller, input: CreateCoffreInput) {
  checkExpiry(input.expires_at);
  const tenant = tenantOf(caller);
  const row = await services.db.transaction(async (tx) => {
    const queries = createCoffreQueries(tx);
    const id = newCoffreId();
    await queries.insert(tenant, {
      id,
      name: input.name,
      description: input.description || null,
      expiresAt: input.expires_at ?? null,
    });
    const row = await mustFind(queries, tenant, id);
    await createEventQueries(tx).record(tenant, 'coffre.created', { coffre: coffreView(row) });
    if (row.expires_at) await services.workflows.coffres.watchExpiry(tenant, id);
    return row;
  });
  return presentCoffre(row);
}

export async function listCoffres(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('coffres', {}, page);
  const rows = await createCoffreQueries(services.db).list(tenantOf(caller), window);
  return services.paginator.close('coffres', {}, page, rows, presentCoffre);
}

export async function getCoffre(services: Services, caller: Caller, id: string) {
  return presentCoffre(await findCoffre(services, caller, id));
}

/** The caller's vault, not deleted (an expired one is readable: its log stays), or 404. */
export async function findCoffre(services: Services, caller: Caller, id: string): Promise<CoffreRow> {
  return mustFind(createCoffreQueries(services.db), tenantOf(caller), id);
}

async function mustFind(queries: ReturnType<typeof createCoffreQueries>, tenant: Tenant, id: string, lock = false) {
  const row = await queries.find(tenant, id, lock);
  if (!row) throw notFound('vault');
  return row;
}

/** The caller's active vault locked for the transaction: writes to an expired vault are 410. */
export async function lockActiveCoffre(tx: Tx, caller: Caller, id: string): Promise<CoffreRow> {
  const row = await mustFind(createCoffreQueries(tx), tenantOf(caller), id, true);
  if (row.status !== 'active' || (row.expires_at && row.expires_at.getTime() <= Date.now())) throw coffreGone();
  return row;
}

export function coffreGone() {
  return new DomainError('not_found', 'This vault has expired: its items were destroyed.', {
    kind: 'gone',
    details: { status: 'expired' },
  });
}

export type UpdateCoffreInput = {
  name?: string | undefined;
  description?: string | null | undefined;
  /** null removes the expiry. */
  expires_at?: Date | null | undefined;
};

export async function updateCoffre(services: Services, caller: Caller, id: string, input: UpdateCoffreInput) {
  checkExpiry(input.expires_at);
  const row = await services.db.transaction(async (tx) => {
    await lockActiveCoffre(tx, caller, id);
    const queries = createCoffreQueries(tx);
    await queries.update(id, {
      name: input.name,
      description: input.description === '' ? null : input.description,
      expiresAt: input.expires_at,
    });
    if (input.expires_at !== undefined) await services.workflows.coffres.watchExpiry(tenantOf(caller), id);
    return mustFind(queries, tenantOf(caller), id);
  });
  return presentCoffre(row);
}

/**
 * Deletes a vault: every item's key is destroyed and every invitation dies in the transaction,
 * so nothing stored can be opened from then on; the item workflows then remove the blobs.
 */
export async function deleteCoffre(services: Services, caller: Caller, id: string) {
  const shredded = await services.db.transaction(async (tx) => {
    const queries = createCoffreQueries(tx);
    await mustFind(queries, tenantOf(caller), id, true);
    const items = await queries.end(id, 'deleted');
    if (!items) throw notFound('vault');
    return items;
  });
  // The keys are gone already: a lost signal leaves ciphertext no one can open.
  await Promise.allSettled([
    services.workflows.coffres.coffreDeleted(id),
    ...shredded.map((itemId) => services.workflows.coffres.itemDeleted(itemId)),
  ]);
  return { id, object: 'coffre' as const, deleted: true as const, items_destroyed: shredded.length };
}

export async function listAccessLog(services: Services, caller: Caller, id: string, page: PageQuery) {
  await findCoffre(services, caller, id);
  const filters = { coffre: id };
  const window = services.paginator.open('coffre_access_log', filters, page);
  const rows = await createCoffreQueries(services.db).listAccess(tenantOf(caller), id, window);
  return services.paginator.close('coffre_access_log', filters, page, rows, presentAccess);
}
