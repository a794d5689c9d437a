import { createEventQueries } from '../db/queries/events.ts';
import { createRecipientQueries, type RecipientFilters, type RecipientRow } from '../db/queries/recipients.ts';
import { DomainError, notFound } from '../errors.ts';
import { recipientEventView } from '../events/recipient-events.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';
import { normaliseEmail, normaliseTags } from './email.ts';

// The address book (docs/recipients.md): entries made by hand or from the
// addresses transfers are sent to, with what was sent to each and downloaded.

export function presentRecipient(row: RecipientRow) {
  return {
    id: row.id,
    object: 'recipient' as const,
    email: row.email,
    name: row.name,
    organisation: row.organisation,
    tags: row.tags,
    source: row.source,
    stats: {
      transfers_sent: row.transfers_sent,
      downloads_completed: row.downloads_completed,
      last_sent_at: row.last_sent_at,
      last_downloaded_at: row.last_downloaded_at,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type CreateRecipientInput = {
  email: string;
  name?: string | null | undefined;
  organisation?: string | null | undefined;
  tags?: string[] | undefined;
};

function alreadyThere(id: string) {
  return new DomainError('validation_error', 'The address book already has this address.', {
    param: 'email',
    kind: 'conflict',
    details: { recipient_id: id },
  });
}

/** Blank is no value: a name of spaces is no name. */
const orNull = (text: string | null | undefined) => (text === undefined ? undefined : text?.trim() || null);

export async function createRecipient(services: Services, caller: Caller, input: CreateRecipientInput) {
  const tenant = tenantOf(caller);
  const row = await services.db.transaction(async (tx) => {
    const recipients = createRecipientQueries(tx);
    const email = normaliseEmail(input.email);
    const id = await recipients.insert(tenant, {
      email,
      name: orNull(input.name) ?? null,
      organisation: orNull(input.organisation) ?? null,
      tags: normaliseTags(input.tags ?? []),
    });
    if (!id) {
      const existing = await recipients.findByEmail(tenant, email);
      throw alreadyThere(existing?.id ?? '');
    }
    const row = await mustFind(recipients, tenant, id);
    await createEventQueries(tx).record(tenant, 'recipient.created', {
      recipient: recipientEventView(row),
      source: 'api',
    });
    return row;
  });
  return presentRecipient(row);
}

export type RecipientListQuery = PageQuery & RecipientFilters;

export async function listRecipients(services: Services, caller: Caller, query: RecipientListQuery) {
  const filters = { search: query.search, tag: query.tag === undefined ? undefined : normaliseTags([query.tag])[0] };
  const window = services.paginator.open('recipients', filters, query);
  const rows = await createRecipientQueries(services.db).list(tenantOf(caller), filters, window);
  return services.paginator.close('recipients', filters, query, rows, presentRecipient);
}

export async function getRecipient(services: Services, caller: Caller, id: string) {
  const row = await createRecipientQueries(services.db).find(tenantOf(caller), id);
  if (!row) throw notFound('recipient');
  return presentRecipient(row);
}

export type UpdateRecipientInput = {
  email?: string | undefined;
  name?: string | null | undefined;
  organisation?: string | null | undefined;
  tags?: string[] | undefined;
};

/**
 * Changes an entry. A new `email` renames the entry only: links already sent stay with the address
 * they were mailed to, and the entry's history follows it.
 */
export async function updateRecipient(services: Services, caller: Caller, id: string, input: UpdateRecipientInput) {
  const tenant = tenantOf(caller);
  const row = await services.db.transaction(async (tx) => {
    const recipients = createRecipientQueries(tx);
    await mustFind(recipients, tenant, id);
    const email = input.email === undefined ? undefined : normaliseEmail(input.email);
    const changed = await recipients.update(tenant, id, {
      email,
      name: orNull(input.name),
      organisation: orNull(input.organisation),
      tags: input.tags === undefined ? undefined : normaliseTags(input.tags),
    });
    if (!changed) throw alreadyThere((await recipients.findByEmail(tenant, email ?? ''))?.id ?? '');
    const row = await mustFind(recipients, tenant, id);
    await createEventQueries(tx).record(tenant, 'recipient.updated', { recipient: recipientEventView(row) });
    return row;
  });
  return presentRecipient(row);
}

export async function deleteRecipient(services: Services, caller: Caller, id: string) {
  const tenant = tenantOf(caller);
  await services.db.transaction(async (tx) => {
    const recipients = createRecipientQueries(tx);
    const row = await mustFind(recipients, tenant, id);
    await recipients.remove(tenant, id);
    await createEventQueries(tx).record(tenant, 'recipient.deleted', { recipient: recipientEventView(row) });
  });
  return { id, object: 'recipient' as const, deleted: true as const };
}

async function mustFind(recipients: ReturnType<typeof createRecipientQueries>, tenant: Tenant, id: string) {
  const row = await recipients.find(tenant, id);
  if (!row) throw notFound('recipient');
  return row;
}
