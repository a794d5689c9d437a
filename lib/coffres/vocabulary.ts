// The vaults family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/** A vault's state (docs/coffres.md): `expired` and `deleted` vaults have shredded their items. */
export const COFFRE_STATUSES = ['active', 'expired', 'deleted'] as const;
export type CoffreStatus = (typeof COFFRE_STATUSES)[number];

/** What a vault member may do: `view` lists, `download` also downloads, `upload` also adds items. */
export const COFFRE_ACCESS_LEVELS = ['view', 'download', 'upload'] as const;
export type CoffreAccessLevel = (typeof COFFRE_ACCESS_LEVELS)[number];

/** A vault item's state: uploaded, then scanned; `rejected` (infected) and `deleted` items are shredded. */
export const COFFRE_ITEM_STATUSES = ['uploading', 'scanning', 'available', 'rejected', 'deleted'] as const;
export type CoffreItemStatus = (typeof COFFRE_ITEM_STATUSES)[number];

/** Who an access-log entry names: a member (by their invitation) or the owner's API key. */
export const COFFRE_ACTOR_TYPES = ['member', 'api_key'] as const;
export type CoffreActorType = (typeof COFFRE_ACTOR_TYPES)[number];

/** What an access-log entry records. */
export const COFFRE_ACTIONS = ['opened', 'listed', 'downloaded', 'uploaded'] as const;
export type CoffreAction = (typeof COFFRE_ACTIONS)[number];
