import { createEventQueries } from '../db/queries/events.ts';
import { createFolderQueries } from '../db/queries/folders.ts';
import {
  createTransferQueries,
  type FileRow,
  type TransferFilters,
  type TransferRow,
} from '../db/queries/transfers.ts';
import { DomainError, notFound } from '../errors.ts';
import { APPROVAL_EVENTS } from '../events/transfer-events.ts';
import { transferEventView } from '../events/views.ts';
import type { PageQuery } from '../pagination.ts';
import { recipientsByTransfer } from '../recipients/links.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';
import type { ApprovalDecision } from '../vocabulary.ts';
import { limitsFor } from './limits.ts';
import { presentTransfer } from './present.ts';

/** One transfer of the tenant's, with its recipients. */
async function present(services: Services, tenant: Tenant, transfer: TransferRow, files: readonly FileRow[]) {
  const recipients = await recipientsByTransfer(services, tenant, [transfer.id]);
  return presentTransfer(services.config, transfer, files, recipients.get(transfer.id) ?? []);
}

export async function getTransfer(services: Services, caller: Caller, id: string) {
  const queries = createTransferQueries(services.db);
  const transfer = await queries.find(tenantOf(caller), id);
  if (!transfer) throw notFound('transfer');
  return present(services, tenantOf(caller), transfer, await queries.files(id));
}

/** What `PATCH /v1/transfers/{id}` changes; a member left out is kept. */
export type UpdateTransferInput = {
  /** ISO 3166-1 alpha-2, upper case, each once; null lifts the restriction (docs/transfers.md, "Countries"). */
  allowed_countries?: string[] | null | undefined;
};

/**
 * Changes a transfer's settings that may change after creation: today its countries. Takes effect
 * at once for every later download, links already issued included (they are checked again when used).
 */
export async function updateTransfer(services: Services, caller: Caller, id: string, input: UpdateTransferInput) {
  const tenant = tenantOf(caller);
  const queries = createTransferQueries(services.db);
  const current = await queries.find(tenant, id);
  if (!current) throw notFound('transfer');
  const allowedCountries = input.allowed_countries === undefined ? current.allowed_countries : input.allowed_countries;
  const updated = await queries.update(tenant, id, { allowedCountries });
  if (!updated) throw notFound('transfer');
  return present(services, tenant, updated, await queries.files(id));
}

/** `GET /v1/transfers`' query: a page and its filters. */
export type TransferListQuery = PageQuery & TransferFilters;

export async function listTransfers(services: Services, caller: Caller, query: TransferListQuery) {
  const filters = { status: query.status, search: query.search, tag: query.tag, archived: query.archived };
  const window = services.paginator.open('transfers', filters, query);
  const queries = createTransferQueries(services.db);
  const rows = await queries.list(tenantOf(caller), filters, window);
  const page = services.paginator.close('transfers', filters, query, rows, (row) => row);
  // One query for the files of the whole page, not one per transfer.
  const ids = page.data.map((row) => row.id);
  const files = Map.groupBy(await queries.filesOf(ids), (file) => file.transfer_id);
  const recipients = await recipientsByTransfer(services, tenantOf(caller), ids);
  const data = page.data.map((row) =>
    presentTransfer(services.config, row, files.get(row.id) ?? [], recipients.get(row.id) ?? []),
  );
  return { ...page, data };
}

/**
 * Revokes a transfer: in one transaction it becomes `deleted` and its data
 * keys are destroyed, so nothing can be decrypted from that moment; the
 * workflow then deletes the stored objects. Revoking again changes nothing.
 */
export async function revokeTransfer(services: Services, caller: Caller, id: string) {
  const transfer = await services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    const current = await queries.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('transfer');
    const ended = await queries.end(id, 'deleted', 'revoked');
    if (ended)
      await createEventQueries(tx).record(tenantOf(caller), 'transfer.deleted', {
        transfer: transferEventView(ended),
        reason: 'revoked',
      });
    return ended ?? current;
  });
  const files = await createTransferQueries(services.db).files(id);
  await services.workflows.transfers.revoked(id).catch(async () => {
    // The workflow has already finished (or cannot be reached): delete the objects here.
    for (const file of files) await services.objects.remove(file.object_key);
  });
  return present(services, tenantOf(caller), transfer, files);
}

export type ApprovalInput = { decision: ApprovalDecision; note?: string | undefined };

export async function decideApproval(services: Services, caller: Caller, id: string, input: ApprovalInput) {
  const row = await services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    const current = await queries.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('transfer');
    if (!current.approval_required) {
      throw new DomainError('validation_error', 'This transfer does not require approval.', {
        kind: 'inapplicable',
        param: 'decision',
      });
    }
    const decided = await queries.decideApproval(id, input.decision, caller.userId, input.note ?? null);
    await createEventQueries(tx).record(tenantOf(caller), APPROVAL_EVENTS[input.decision], {
      transfer: transferEventView(decided),
      approved_by: caller.userId,
      note: input.note ?? null,
    });
    return decided;
  });
  // The decision is committed: the workflow reads it from the database (at activation, and every
  // TRANSFER_APPROVAL_RECHECK while pending). The signal only wakes it early, so a failed one loses nothing.
  await services.workflows.transfers.approvalDecided(id, input.decision).catch(() => {});
  return present(services, tenantOf(caller), row, await createTransferQueries(services.db).files(id));
}

export async function fileIntoFolder(services: Services, caller: Caller, id: string, folderId: string) {
  return services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    if (!(await queries.findForUpdate(tenantOf(caller), id))) throw notFound('transfer');
    if (!(await createFolderQueries(tx).find(tenantOf(caller), folderId))) {
      throw new DomainError('not_found', 'No such folder.', { param: 'folder_id' });
    }
    await queries.setFolder(id, folderId);
    return { object: 'transfer_folder' as const, transfer_id: id, folder_id: folderId };
  });
}

export async function removeFromFolder(services: Services, caller: Caller, id: string) {
  const queries = createTransferQueries(services.db);
  if (!(await queries.find(tenantOf(caller), id))) throw notFound('transfer');
  await queries.setFolder(id, null);
  return { object: 'transfer_folder' as const, transfer_id: id, folder_id: null };
}

/**
 * Pushes a transfer's expiry later (automation rules use this). The row moves
 * first; the workflow's timer follows the signal. Only active or scanning
 * transfers can be extended, never beyond the environment's longest expiry.
 */
export async function extendExpiry(services: Services, caller: Caller, id: string, byHours: number) {
  const extended = await services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    const current = await queries.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('transfer');
    if (current.status === 'expired' || current.status === 'deleted') {
      throw new DomainError('validation_error', `A transfer that is ${current.status} cannot be extended.`, {
        kind: 'conflict',
      });
    }
    const limit =
      current.created_at.getTime() + limitsFor(caller.environment, services.config).maxExpiryHours * 3_600_000;
    const expiresAt = new Date(Math.min(limit, current.expires_at.getTime() + byHours * 3_600_000));
    await queries.extendExpiry(id, expiresAt);
    return expiresAt;
  });
  await services.workflows.transfers.expiryExtended(id, extended);
  return extended;
}
