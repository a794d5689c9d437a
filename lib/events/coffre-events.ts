import { z } from 'zod';
import { itemIdOf } from '../coffres/ids.ts';
import { COFFRE_ACCESS_LEVELS } from '../coffres/vocabulary.ts';
import type { CoffreRow, ItemRow, MemberRow } from '../db/queries/coffres.ts';
import { EMITTED, event } from './define.ts';

// coffre.*: what the vault routes and workers record (docs/coffres.md, "Events").
// Payloads never carry an invitation link: it is a credential.

const CoffreView = z
  .object({
    id: z.string().describe('The vault id (`cof_…`).'),
    name: z.string().describe('The vault name.'),
    created_at: z.iso.datetime().describe('When it was created.'),
  })
  .describe('The vault.');

export function coffreView(row: Pick<CoffreRow, 'id' | 'name' | 'created_at'>): z.input<typeof CoffreView> {
  return { id: row.id, name: row.name, created_at: row.created_at.toISOString() };
}

export function memberView(member: MemberRow) {
  return { id: member.id, email: member.email, access: member.access };
}

export function itemView(item: ItemRow) {
  return { id: itemIdOf(item.id), name: item.name, size: item.size };
}

export const COFFRE_EVENTS = {
  'coffre.created': event('A vault (data room) was created (`POST /v1/coffres`).', { coffre: CoffreView }, EMITTED),
  'coffre.accessed': event(
    'A member opened a vault through their invitation link: once per member and UTC day (the access log has every open).',
    {
      coffre: CoffreView,
      ip_address: z.string().nullable().describe('Address of the visitor.'),
      accessed_by: z.string().nullable().describe('E-mail address of the visitor, when known.'),
      member: z
        .object({
          id: z.string().describe('The member id (`cofm_…`).'),
          email: z.string().describe('Their e-mail address.'),
          access: z.enum(COFFRE_ACCESS_LEVELS).describe('Their access: `view`, `download` or `upload`.'),
        })
        .describe('The member.'),
    },
    EMITTED,
  ),
  'coffre.item_uploaded': event(
    'A file was added to a vault: its last byte is stored (scanning follows).',
    {
      coffre: CoffreView,
      item: z
        .object({
          id: z.string().describe('The item id (`cofi_…`).'),
          name: z.string().describe('File name.'),
          size: z.int().min(0).describe('Size in bytes.'),
        })
        .describe('The item.'),
      uploaded_by: z
        .string()
        .nullable()
        .describe("The member's e-mail address; null when the owner's API key added it."),
    },
    EMITTED,
  ),
};
