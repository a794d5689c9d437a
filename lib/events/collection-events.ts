import { z } from 'zod';
import { COLLECTION_CHANGES, COLLECTION_ITEM_KINDS } from '../collections/vocabulary.ts';
import type { CollectionRow } from '../db/queries/collections.ts';
import { EMITTED, event } from './define.ts';

// collection.*: what the collections API records (docs/collections.md, "Events").
// Payloads never carry the share link's code: it is a capability.

const CollectionView = z
  .object({
    id: z.uuid().describe('The collection id.'),
    title: z.string().describe('The collection title.'),
    items_count: z.int().min(0).describe('Items in the collection after the change.'),
    share_enabled: z.boolean().describe('Whether its share link works after the change.'),
  })
  .describe('The collection.');

const ItemView = z
  .object({
    kind: z.enum(COLLECTION_ITEM_KINDS).describe('What the item is: `transfer`.'),
    id: z.uuid().describe('The item id (a transfer id).'),
  })
  .describe('The item.');

export function collectionEventView(
  row: CollectionRow,
  itemsCount = row.transfer_count,
): z.input<typeof CollectionView> {
  return { id: row.id, title: row.title, items_count: itemsCount, share_enabled: row.share_code !== null };
}

export const COLLECTION_EVENTS = {
  'collection.created': event(
    'A collection was created (`POST /v1/collections`). Transfers given at creation follow as `collection.item_added`.',
    { collection: CollectionView },
    EMITTED,
  ),
  'collection.updated': event(
    'A collection was changed: its title or description (`PATCH /v1/collections/{id}`), or its share link was rotated or turned off.',
    {
      collection: CollectionView,
      changed: z
        .array(z.enum(COLLECTION_CHANGES).describe('What changed.'))
        .describe('What changed: `share_link` for a rotation or a disabling.'),
    },
    EMITTED,
  ),
  'collection.deleted': event(
    'A collection was deleted; its transfers were not touched.',
    { collection: CollectionView },
    EMITTED,
  ),
  'collection.item_added': event(
    'An item (a transfer) joined a collection; one event per item. Moving an item within the collection records none.',
    { collection: CollectionView, item: ItemView },
    EMITTED,
  ),
  'collection.item_removed': event(
    'An item (a transfer) was taken out of a collection; the transfer itself is untouched.',
    { collection: CollectionView, item: ItemView },
    EMITTED,
  ),
};
