import type { CommonQueryMethods } from 'slonik';
import { randomBase62 } from '../crypto/secrets.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createRecipientQueries } from '../db/queries/recipients.ts';
import { createTransferQueries } from '../db/queries/transfers.ts';
import { DomainError, notFound } from '../errors.ts';
import { recipientEventView } from '../events/recipient-events.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';
import { type PresentedTransferRecipient, presentTransferRecipient } from '../transfers/present.ts';
import { normaliseEmail, sameAddress } from './email.ts';

// Personal links (docs/recipients.md): each address a transfer is sent to gets
// a share code of its own, reaching the same transfer, so that downloads made
// through it are the recipient's. A code is a capability, like the transfer's
// own short code: it is shown to the owner's API only, never in events or audit.

export const MAX_RECIPIENTS_PER_TRANSFER = 50;
/** Longer than a transfer's short code (10): the two never collide, and it is as hard to guess. */
const PERSONAL_CODE_LENGTH = 16;

/**
 * The addresses a transfer is sent to: `recipient` first, then `recipients`, normalised, each
 * address once whatever its case (the first spelling kept).
 */
export function addressesOf(input: { recipient?: string | undefined; recipients?: string[] | undefined }): string[] {
  const seen = new Set<string>();
  const addresses: string[] = [];
  for (const address of [...(input.recipient ? [input.recipient] : []), ...(input.recipients ?? [])]) {
    const key = sameAddress(address);
    if (seen.has(key)) continue;
    seen.add(key);
    addresses.push(normaliseEmail(address));
  }
  if (addresses.length > MAX_RECIPIENTS_PER_TRANSFER) {
    throw new DomainError('validation_error', `At most ${MAX_RECIPIENTS_PER_TRANSFER} recipients per transfer.`, {
      param: 'recipients',
    });
  }
  return addresses;
}

/**
 * Inside the transaction creating the transfer: each address gets its address-book entry (an
 * existing one is left as it is) and its personal link.
 */
export async function attachRecipients(
  db: CommonQueryMethods,
  tenant: Tenant,
  transferId: string,
  addresses: readonly string[],
): Promise<void> {
  const recipients = createRecipientQueries(db);
  const events = createEventQueries(db);
  for (const [position, email] of addresses.entries()) {
    const entry = await recipients.upsertAddress(tenant, email, 'transfer');
    if (entry.created) {
      const row = await recipients.find(tenant, entry.id);
      if (row)
        await events.record(tenant, 'recipient.created', { recipient: recipientEventView(row), source: 'transfer' });
    }
    await recipients.insertLink(tenant, {
      transferId,
      recipientId: entry.id,
      email,
      position,
      shareCode: randomBase62(PERSONAL_CODE_LENGTH),
    });
  }
}

/** The personal links of several transfers of the caller's, by transfer id. */
export async function recipientsByTransfer(
  services: Services,
  tenant: Tenant,
  transferIds: readonly string[],
): Promise<Map<string, PresentedTransferRecipient[]>> {
  const byTransfer = new Map<string, PresentedTransferRecipient[]>();
  for (const link of await createRecipientQueries(services.db).linksOf(tenant, transferIds)) {
    const list = byTransfer.get(link.transfer_id) ?? [];
    list.push(presentTransferRecipient(services.config, link));
    byTransfer.set(link.transfer_id, list);
  }
  return byTransfer;
}

/** `GET /v1/transfers/{id}/recipients`: who the transfer was sent to and what each downloaded. */
export async function listTransferRecipients(services: Services, caller: Caller, transferId: string) {
  const tenant = tenantOf(caller);
  if (!(await createTransferQueries(services.db).find(tenant, transferId))) throw notFound('transfer');
  const data = (await recipientsByTransfer(services, tenant, [transferId])).get(transferId) ?? [];
  return { object: 'list' as const, data, has_more: false, next_cursor: null, limit: data.length, offset: null };
}
