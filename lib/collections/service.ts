import { randomBase62 } from '../crypto/secrets.ts';
import { type CollectionRow, createCollectionQueries } from '../db/queries/collections.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { DomainError, notFound } from '../errors.ts';
import { collectionEventView } from '../events/collection-events.ts';
import type { PageQuery } from '../pagination.ts';
import { checkDailyQuota, sandboxLimits } from '../sandbox.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';
import { presentCollection, presentCollectionWithTransfers } from './present.ts';
import type { CollectionChange } from './vocabulary.ts';

// Collections: transfers grouped under a title, shared through one link
// (docs/collections.md). Each change locks its collection, so positions stay
// dense under concurrent calls, and records its events in the same transaction.

/** Keeps a whole collection one answer (GET /v1/collections/{id} carries every transfer). */
export const MAX_TRANSFERS_PER_COLLECTION = 500;
/** Transfers one create or add call may name. */
export const MAX_TRANSFERS_PER_CALL = 100;
/** 12 base62 characters: about 71 bits, like no one will guess. */
const SHARE_CODE_LENGTH = 12;

const newShareCode = () => randomBase62(SHARE_CODE_LENGTH);

type Queries = ReturnType<typeof createCollectionQueries>;
type Tx = Parameters<Parameters<Services['db']['transaction']>[0]>[0];

/** Any id that is not a transfer of this tenant is refused as unknown, whoever it belongs to. */
async function checkOwnTransfers(queries: Queries, tenant: Tenant, ids: readonly string[]) {
  const own = await queries.ownTransfers(tenant, ids);
  const unknown = ids.find((id) => !own.has(id));
  if (unknown) throw new DomainError('not_found', `No such transfer: ${unknown}.`, { param: 'transfer_ids' });
}

/** At most MAX_TRANSFERS_PER_COLLECTION transfers, or the sandbox's 10 (docs/collections.md, "Sandbox"). */
function checkSize(tenant: Tenant, count: number) {
  const max = sandboxLimits(tenant.environment)?.maxFiles ?? MAX_TRANSFERS_PER_COLLECTION;
  if (count > max) {
    throw new DomainError('validation_error', `A collection holds at most ${max} transfers here.`, {
      param: 'transfer_ids',
    });
  }
}

/** The collection and its transfers as the writes answer them, read inside their transaction. */
async function answer(services: Services, queries: Queries, tenant: Tenant, id: string) {
  const row = await queries.find(tenant, id);
  if (!row) throw notFound('collection');
  return presentCollectionWithTransfers(services.config, row, await queries.members(tenant, id));
}

/** Runs `change` on a collection of the caller's, locked for the transaction. */
function withCollection<T>(
  services: Services,
  caller: Caller,
  id: string,
  change: (queries: Queries, tenant: Tenant, tx: Tx) => Promise<T>,
): Promise<T> {
  const tenant = tenantOf(caller);
  return services.db.transaction(async (tx) => {
    const queries = createCollectionQueries(tx);
    if (!(await queries.lock(tenant, id))) throw notFound('collection');
    return change(queries, tenant, tx);
  });
}

async function recordItemsAdded(tx: Tx, tenant: Tenant, row: CollectionRow, before: number, added: string[]) {
  const events = createEventQueries(tx);
  for (const [index, transferId] of added.entries()) {
    await events.record(tenant, 'collection.item_added', {
      collection: collectionEventView(row, before + index + 1),
      item: { kind: 'transfer', id: transferId },
    });
  }
}

export type CreateCollectionInput = {
  title: string;
  description?: string | null | undefined;
  transfer_ids?: string[] | undefined;
};

export async function createCollection(services: Services, caller: Caller, input: CreateCollectionInput) {
  const tenant = tenantOf(caller);
  const ids = input.transfer_ids ?? [];
  checkSize(tenant, ids.length);
  return services.db.transaction(async (tx) => {
    const queries = createCollectionQueries(tx);
    await checkOwnTransfers(queries, tenant, ids);
    await checkDailyQuota(tx, tenant, 'collection', 'collections');
    const created = await queries.insert(tenant, {
      title: input.title,
      description: input.description ?? null,
      shareCode: newShareCode(),
    });
    await createEventQueries(tx).record(tenant, 'collection.created', { collection: collectionEventView(created) });
    await queries.writeOrder(tenant, created.id, ids);
    await recordItemsAdded(tx, tenant, created, 0, ids);
    return answer(services, queries, tenant, created.id);
  });
}

export async function listCollections(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('collections', {}, page);
  const rows = await createCollectionQueries(services.db).list(tenantOf(caller), window);
  return services.paginator.close('collections', {}, page, rows, (row) => presentCollection(services.config, row));
}

export async function getCollection(services: Services, caller: Caller, id: string) {
  return answer(services, createCollectionQueries(services.db), tenantOf(caller), id);
}

export type UpdateCollectionInput = { title?: string | undefined; description?: string | null | undefined };

export async function updateCollection(services: Services, caller: Caller, id: string, input: UpdateCollectionInput) {
  return withCollection(services, caller, id, async (queries, tenant, tx) => {
    await queries.update(tenant, id, input);
    const changed: CollectionChange[] = [];
    if (input.title !== undefined) changed.push('title');
    if (input.description !== undefined) changed.push('description');
    const row = await queries.find(tenant, id);
    if (!row) throw notFound('collection');
    await createEventQueries(tx).record(tenant, 'collection.updated', {
      collection: collectionEventView(row),
      changed,
    });
    return answer(services, queries, tenant, id);
  });
}

/** Deletes the collection and its link; its transfers are not touched. */
export async function deleteCollection(services: Services, caller: Caller, id: string) {
  await withCollection(services, caller, id, async (queries, tenant, tx) => {
    const row = await queries.find(tenant, id);
    if (!row) throw notFound('collection');
    await queries.remove(tenant, id);
    await createEventQueries(tx).record(tenant, 'collection.deleted', {
      collection: collectionEventView({ ...row, share_code: null }),
    });
  });
  return { id, object: 'collection' as const, deleted: true as const };
}

export type AddTransfersInput = { transfer_ids: string[]; position?: number | undefined };

/**
 * Adds transfers, in the order given. Without `position` new ones go to the end and present
 * ones stay where they are; with it, all of them (present ones move) land there in the new order.
 */
export async function addTransfers(services: Services, caller: Caller, id: string, input: AddTransfersInput) {
  return withCollection(services, caller, id, async (queries, tenant, tx) => {
    await checkOwnTransfers(queries, tenant, input.transfer_ids);
    const current = (await queries.members(tenant, id)).map((member) => member.id);
    const present = new Set(current);
    const fresh = input.transfer_ids.filter((transferId) => !present.has(transferId));
    checkSize(tenant, current.length + fresh.length);
    let order = [...current, ...fresh];
    if (input.position !== undefined) {
      const moving = new Set(input.transfer_ids);
      const rest = current.filter((transferId) => !moving.has(transferId));
      const at = Math.min(input.position, rest.length);
      order = [...rest.slice(0, at), ...input.transfer_ids, ...rest.slice(at)];
    }
    const moved = input.position !== undefined && order.some((transferId, index) => current[index] !== transferId);
    if (fresh.length > 0 || moved) {
      await queries.writeOrder(tenant, id, order);
      await queries.update(tenant, id, {});
    }
    const row = await queries.find(tenant, id);
    if (!row) throw notFound('collection');
    await recordItemsAdded(tx, tenant, row, current.length, fresh);
    return answer(services, queries, tenant, id);
  });
}

/** Takes one transfer out (the transfer stays) and closes the gap it leaves. */
export async function removeTransfer(services: Services, caller: Caller, id: string, transferId: string) {
  return withCollection(services, caller, id, async (queries, tenant, tx) => {
    if (!(await queries.dropMember(tenant, id, transferId))) {
      throw new DomainError('not_found', 'No such transfer in this collection.', { param: 'transferId' });
    }
    await queries.writeOrder(
      tenant,
      id,
      (await queries.members(tenant, id)).map((member) => member.id),
    );
    await queries.update(tenant, id, {});
    const row = await queries.find(tenant, id);
    if (!row) throw notFound('collection');
    await createEventQueries(tx).record(tenant, 'collection.item_removed', {
      collection: collectionEventView(row),
      item: { kind: 'transfer', id: transferId },
    });
    return answer(services, queries, tenant, id);
  });
}

/** A new link (turning a disabled one back on); the old code stops working at once. */
export async function rotateShareLink(services: Services, caller: Caller, id: string) {
  return setShareLink(services, caller, id, newShareCode());
}

/** Turns the link off: the code stops working and `share_url` is null until a rotation. */
export async function disableShareLink(services: Services, caller: Caller, id: string) {
  return setShareLink(services, caller, id, null);
}

function setShareLink(services: Services, caller: Caller, id: string, code: string | null) {
  return withCollection(services, caller, id, async (queries, tenant, tx) => {
    const before = await queries.find(tenant, id);
    if (!before) throw notFound('collection');
    if (code !== null || before.share_code !== null) {
      await queries.setShareCode(tenant, id, code);
      const row = await queries.find(tenant, id);
      if (!row) throw notFound('collection');
      await createEventQueries(tx).record(tenant, 'collection.updated', {
        collection: collectionEventView(row),
        changed: ['share_link'],
      });
    }
    return answer(services, queries, tenant, id);
  });
}
