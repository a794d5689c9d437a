import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';
import { type StoredFile, storedFileColumns, storedFileRow } from './stored-files.ts';

// Ended resources whose stored objects may remain: transfers (`expired`, `deleted`), intake
// documents and vault items (`deleted`, `rejected`). `objects_deleted_at` says their objects were
// deleted; the owner's workflow sets it once it has, and the sweeper (lib/storage/sweeper.ts)
// deletes the objects of those that ended before `endedBefore` and still lack it.

/** Each family that stores objects, as the sweeper names it. */
export const OBJECT_OWNERS = ['transfer', 'intake_document', 'coffre_item'] as const;
export type ObjectOwner = (typeof OBJECT_OWNERS)[number];

// Transfers and vault items have uuids, intake documents `doc_…` ids.
const id = z.object({ id: z.string() });

export function createLeftoverObjectQueries(db: CommonQueryMethods) {
  return {
    /** Up to `limit` ended owners of `kind` whose objects may remain, ended before `endedBefore`. */
    async due(kind: ObjectOwner, endedBefore: Date, limit: number): Promise<readonly string[]> {
      const before = sql.timestamp(endedBefore);
      if (kind === 'transfer') {
        return db.anyFirst(sql.type(id)`
          SELECT id FROM transfers
          WHERE objects_deleted_at IS NULL AND status IN ('expired', 'deleted') AND ended_at < ${before}
          ORDER BY ended_at LIMIT ${limit}`);
      }
      // A rejected one has no end time: it was rejected right after its upload, so that time will do.
      if (kind === 'intake_document') {
        return db.anyFirst(sql.type(id)`
          SELECT id FROM intake_documents
          WHERE objects_deleted_at IS NULL AND status IN ('deleted', 'rejected')
            AND COALESCE(deleted_at, received_at, created_at) < ${before}
          ORDER BY deleted_at NULLS FIRST LIMIT ${limit}`);
      }
      return db.anyFirst(sql.type(id)`
        SELECT id FROM coffre_items
        WHERE objects_deleted_at IS NULL AND status IN ('deleted', 'rejected')
          AND COALESCE(deleted_at, uploaded_at, created_at) < ${before}
        ORDER BY deleted_at NULLS FIRST LIMIT ${limit}`);
    },

    /**
     * Up to `limit` transfers still `active` or `scanning` whose `expires_at` passed before
     * `expiredBefore`: their workflow would have ended them, so it is gone.
     */
    async overdueTransfers(expiredBefore: Date, limit: number): Promise<readonly string[]> {
      return db.anyFirst(sql.type(id)`
        SELECT id FROM transfers
        WHERE status IN ('active', 'scanning') AND expires_at < ${sql.timestamp(expiredBefore)}
        ORDER BY expires_at LIMIT ${limit}`);
    },

    /** The stored files of one owner: a transfer's or a document's files, or the vault item itself. */
    async files(kind: ObjectOwner, ownerId: string): Promise<readonly StoredFile[]> {
      if (kind === 'transfer') {
        return db.any(
          sql.type(storedFileRow)`SELECT ${storedFileColumns} FROM transfer_files WHERE transfer_id = ${ownerId}`,
        );
      }
      if (kind === 'intake_document') {
        return db.any(
          sql.type(storedFileRow)`SELECT ${storedFileColumns} FROM intake_files WHERE document_id = ${ownerId}`,
        );
      }
      return db.any(sql.type(storedFileRow)`SELECT ${storedFileColumns} FROM coffre_items WHERE id = ${ownerId}`);
    },

    /** Records that an ended owner's objects are deleted; one not ended (yet) is left alone. */
    async markDeleted(kind: ObjectOwner, ownerId: string): Promise<void> {
      if (kind === 'transfer') {
        await db.query(sql.typeAlias('void')`
          UPDATE transfers SET objects_deleted_at = ms_now()
          WHERE id = ${ownerId} AND status IN ('expired', 'deleted') AND objects_deleted_at IS NULL`);
      } else if (kind === 'intake_document') {
        await db.query(sql.typeAlias('void')`
          UPDATE intake_documents SET objects_deleted_at = ms_now()
          WHERE id = ${ownerId} AND status IN ('deleted', 'rejected') AND objects_deleted_at IS NULL`);
      } else {
        await db.query(sql.typeAlias('void')`
          UPDATE coffre_items SET objects_deleted_at = ms_now()
          WHERE id = ${ownerId} AND status IN ('deleted', 'rejected') AND objects_deleted_at IS NULL`);
      }
    },
  };
}
