// The collections family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/** What a collection can hold (docs/collections.md): transfers for now; vault items may follow. */
export const COLLECTION_ITEM_KINDS = ['transfer'] as const;
export type CollectionItemKind = (typeof COLLECTION_ITEM_KINDS)[number];

/** What a `collection.updated` event says changed. */
export const COLLECTION_CHANGES = ['title', 'description', 'share_link'] as const;
export type CollectionChange = (typeof COLLECTION_CHANGES)[number];

/**
 * How a visitor of a collection's link can download one of its transfers: `open` (files listed),
 * `password` (the transfer's password first), `own_link` (end-to-end: only its own link holds the key).
 */
export const COLLECTION_ACCESS = ['open', 'password', 'own_link'] as const;
export type CollectionAccess = (typeof COLLECTION_ACCESS)[number];
