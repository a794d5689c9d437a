import { z } from 'zod';
import type { RecipientRow } from '../db/queries/recipients.ts';
import { RECIPIENT_SOURCES } from '../recipients/vocabulary.ts';
import { EMITTED, event } from './define.ts';
import { TransferEventView as transfer } from './views.ts';

// recipient.*: the address book, and downloads completed through personal links.
// Personal links are capabilities: no event carries one.

const recipient = z
  .object({
    id: z.uuid().describe('The address-book entry id.'),
    email: z.string().describe('The address.'),
    name: z.string().nullable().describe('Name, as the workspace set it.'),
    organisation: z.string().nullable().describe('Organisation, as the workspace set it.'),
    tags: z.array(z.string().describe('A tag.')).describe('Tags.'),
  })
  .describe('The address-book entry.');

export function recipientEventView(row: RecipientRow): z.input<typeof recipient> {
  const { id, email, name, organisation, tags } = row;
  return { id, email, name, organisation, tags };
}

/** Who a personal link belongs to: the address it was sent to, and its entry while it exists. */
export const linkRecipient = z
  .object({
    id: z.uuid().nullable().describe('The address-book entry; null once the entry was deleted.'),
    email: z.string().describe('The address the personal link was sent to.'),
  })
  .describe('The recipient whose personal link was used.');

export const RECIPIENT_EVENTS = {
  'recipient.created': event(
    'An address-book entry was created: through `POST /v1/recipients`, or for a new address a transfer was sent to.',
    {
      recipient,
      source: z
        .enum(RECIPIENT_SOURCES)
        .describe('`api` (`POST /v1/recipients`) or `transfer` (an address of `POST /v1/transfers`).'),
    },
    EMITTED,
  ),
  'recipient.updated': event(
    'An address-book entry was changed (`PATCH /v1/recipients/{id}`).',
    { recipient },
    EMITTED,
  ),
  'recipient.deleted': event(
    'An address-book entry was deleted (`DELETE /v1/recipients/{id}`); the personal links it was given keep working.',
    { recipient },
    EMITTED,
  ),
  'recipient.download_completed': event(
    'A download made through a personal link completed: every byte of every file its download links named was ' +
      'sent (docs/recipients.md, "Counting downloads"). Fires once per download-links call.',
    {
      transfer,
      recipient: linkRecipient,
      file_ids: z.array(z.uuid().describe('A file id.')).describe('The files of the download.'),
      downloads_completed: z
        .int()
        .min(1)
        .describe('Downloads completed through this personal link so far, this one included.'),
    },
    EMITTED,
  ),
};
