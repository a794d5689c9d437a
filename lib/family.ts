import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { storedFileKeyAad } from './db/queries/stored-files.ts';
import type { Services } from './services.ts';
import type { ObjectStore } from './storage/object-store.ts';
import type { Tenant } from './tenancy.ts';
import type { UploadTarget } from './uploads/receive.ts';
import type { UploadAddress } from './uploads/tokens.ts';
import type { Environment } from './vocabulary.ts';

// What a resource family declares about itself, once, in `lib/<family>/family.ts` (`satisfies
// Family`), and lib/families.ts lists: the cross-cutting work (the sweeper of leftover objects, the
// OpenAPI tags, the catalog check of test/families.test.ts, the sandbox purge, and the GDPR export
// and erasure of lib/gdpr/)
// iterates these declarations instead of keeping a list of its own, so a new family edits none of
// it, and a family that forgets a table fails a test rather than leaking data.

/** How a table's rows belong to a tenant (a workspace and one of its environments). */
export type TableScope =
  /** The tenant itself (`workspaces`): its id is every other row's `workspace_id`. */
  | { kind: 'root' }
  /**
   * Carries `workspace_id` and `environment`: every query filters on both. `environments`: the only
   * ones its rows can be in, when not all, held by a CHECK constraint (SCIM tokens are live only).
   */
  | { kind: 'tenant'; environments?: readonly Environment[] }
  /** Carries `workspace_id` only: shared by the workspace's environments (its users). */
  | { kind: 'workspace' }
  /** Reached only through its parent row: `column` references `parent`, which is scoped. */
  | { kind: 'child'; parent: string; column: string }
  /** Belongs to no tenant: the same rows for every workspace (the published legal documents). */
  | { kind: 'global' };

/**
 * The columns that tell whose a row is: the GDPR export and erasure (lib/gdpr/) find a person's
 * rows by them, in every table that declares them.
 */
export type Subjects = {
  /** Columns holding a user's id (`users.id`). */
  userIds?: readonly string[];
  /**
   * Columns holding an e-mail address: a text column (compared without regard to case), a text
   * array (any element), or a JSON document (any string member equal to the address).
   */
  emails?: readonly string[];
};

/** The person an erasure is for: the user's id and the e-mail addresses they are known by. */
export type ErasureSubject = { workspaceId: string; userId: string; emails: readonly string[] };

/**
 * A table's own erasure, replacing the generic one (lib/gdpr/erasure.ts) for that table: it runs
 * in the erasure's transaction and answers how many rows it changed.
 */
export type EraseHook = (connection: CommonQueryMethods, subject: ErasureSubject) => Promise<number>;

export type FamilyTable = {
  scope: TableScope;
  /**
   * Columns that hold personal data: about a person (an address, a name, an e-mail address, a
   * network address, a user agent) or free text a person wrote about others. Empty when none.
   */
  personal: readonly string[];
  /**
   * The column telling the row's age, for retention (lib/retention/purge.ts): a tenant row older
   * than the cutoff by this column is purged. `created_at` unless named. `null`: the table holds
   * state rather than dated records (an audit chain's head), which its family's `retention.purge`
   * keeps or removes; test/families.test.ts then requires that purge.
   */
  age?: string | null;
  /** Whose the rows are; required when `personal` is not empty, unless `unattributed` says why not. */
  subjects?: Subjects;
  /** Why rows with personal data name nobody Valise could look up (e.g. anonymous downloaders). */
  unattributed?: string;
  /**
   * Columns a GDPR export shows besides the personal ones, for what they tell the person about
   * their data (a file's name and size, never its content).
   */
  exported?: readonly string[];
  /** Overrides the generic erasure of this table (lib/gdpr/erasure.ts). */
  erase?: EraseHook;
  /**
   * The closed set of words of each column with a `CHECK (column IN (...))`, by column: the
   * constant that joi, zod and the OpenAPI document derive from (shared words in lib/vocabulary.ts,
   * a family's own in its folder). test/vocabulary.test.ts holds each CHECK against it, and fails on
   * a CHECK of a declared table that no table's `vocabulary` backs.
   */
  vocabulary?: Readonly<Record<string, readonly string[]>>;
  /**
   * Columns holding a value wrapped by the master keyring (lib/crypto/key-wrap.ts), by column: a
   * master-key rotation (lib/master-keys/rotation.ts) re-wraps every one of them under the current
   * key, and `admin keys retire` counts them before a key may go. test/families.test.ts fails on a
   * column named like a wrapped value (`*_wrapped`) that its table does not declare here.
   */
  keyWrapped?: Readonly<Record<string, KeyWrappedColumn>>;
};

/** How a keyring-wrapped value is bound to its row: the AAD it was wrapped with. */
export type KeyWrappedColumn = {
  /** The AAD, from the row's `id` (as text): what the code that wraps and unwraps the value passes. */
  aad: (id: string) => string;
};

/** The stored-file tables' data key (lib/db/queries/stored-files.ts), bound to its file's id. */
export const STORED_FILE_KEY: Readonly<Record<string, KeyWrappedColumn>> = {
  data_key_wrapped: { aad: storedFileKeyAad },
};

/**
 * Stored objects and the rows that own them, for the sweeper (lib/storage/sweeper.ts): an owner
 * row ends (one of `endedStatuses`), and its objects, the `object_key`s of `filesTable`'s rows whose
 * `ownerColumn` is the owner's id, must then go.
 */
export type StoredFiles = {
  /** The owner's name in logs and counts. */
  owner: string;
  ownerTable: string;
  endedStatuses: readonly string[];
  /** Columns of the owner telling when it ended, the first not null counted (SQL COALESCE). */
  endedAt: readonly [string, ...string[]];
  /** A table with the stored-file columns (lib/db/queries/stored-files.ts). */
  filesTable: string;
  /** The column of `filesTable` naming the owner: `id` when the owner is the file itself. */
  ownerColumn: string;
};

/** The family's upload URLs: the kind its tokens carry, and where such a token's file is looked up. */
export type FamilyUploads = {
  kind: string;
  target: (services: Services, address: UploadAddress) => Promise<UploadTarget>;
};

/** Whose data a purge removes, and from when: rows (and their objects) older than `cutoff`. */
export type PurgeScope = { tenant: Tenant; cutoff: Date };

/** What a family's own purge may use: the database, the object store, and `progress` to call between batches. */
export type FamilyPurgeDeps = { db: DatabasePool; objects: ObjectStore; batchSize: number; progress: () => void };

/**
 * How a family's tenant data is purged (lib/retention/purge.ts). Without `purge`, the generic
 * purge deletes, in batches, every row of the family's tenant tables older than the cutoff by its
 * `age` column; its `child` tables go with their parents (ON DELETE CASCADE, checked by
 * test/families.test.ts), and the objects of its `storedFiles` are deleted before their owners'
 * rows. A family whose rows need more than that (the audit log's hash chain) supplies `purge`,
 * which then deletes all of its tenant tables' expired rows itself, and answers how many went.
 * The objects of its `storedFiles` are still deleted by the generic purge, first.
 */
export type FamilyRetention = {
  purge?: (deps: FamilyPurgeDeps, scope: PurgeScope) => Promise<number>;
};

export type Family = {
  /** The family's name: its folder in lib/ and api/plugins/. */
  name: string;
  /** Its OpenAPI tag (the routes' second tag) and the tag's description, when it has routes. */
  openapi?: { tag: string; description: string };
  /** Every table the family owns, by name. */
  tables: Readonly<Record<string, FamilyTable>>;
  storedFiles?: readonly StoredFiles[];
  uploads?: FamilyUploads;
  retention?: FamilyRetention;
};

/** Personal-data column sets, named once where several tables share them. */
export const NETWORK_IDENTITY = ['ip_address', 'user_agent'] as const;
