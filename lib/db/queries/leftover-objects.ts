import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { StoredFiles } from '../../family.ts';
import { sql } from '../sql.ts';
import { type StoredFile, storedFileColumns, storedFileRow } from './stored-files.ts';

// Ended resources whose stored objects may remain, for any family's declared StoredFiles
// (lib/family.ts): `objects_deleted_at` on the owner says its objects were deleted; the owner's
// workflow sets it once it has, and the sweeper (lib/storage/sweeper.ts) deletes the objects of
// those that ended before `endedBefore` and still lack it. Table and column names come from the
// declarations, never from a request.

// Transfers and vault items have uuids, intake documents `doc_…` ids.
const id = z.object({ id: z.string() });

export function createLeftoverObjectQueries(db: CommonQueryMethods) {
  return {
    /** Up to `limit` ended owners of `files` whose objects may remain, ended before `endedBefore`. */
    async due(files: StoredFiles, endedBefore: Date, limit: number): Promise<readonly string[]> {
      const endedAt = sql.fragment`COALESCE(${sql.join(
        files.endedAt.map((column) => sql.identifier([column])),
        sql.fragment`, `,
      )})`;
      return db.anyFirst(sql.type(id)`
        SELECT id FROM ${sql.identifier([files.ownerTable])}
        WHERE objects_deleted_at IS NULL AND status = ANY(${sql.array([...files.endedStatuses], 'text')})
          AND ${endedAt} < ${sql.timestamp(endedBefore)}
        ORDER BY ${endedAt} LIMIT ${limit}`);
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

    /** The stored files of one owner: its files' rows, or the owner itself when it is the file. */
    async files(files: StoredFiles, ownerId: string): Promise<readonly StoredFile[]> {
      return db.any(sql.type(storedFileRow)`
        SELECT ${storedFileColumns} FROM ${sql.identifier([files.filesTable])}
        WHERE ${sql.identifier([files.ownerColumn])} = ${ownerId}`);
    },

    /** Records that an ended owner's objects are deleted; one not ended (yet) is left alone. */
    async markDeleted(files: StoredFiles, ownerId: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE ${sql.identifier([files.ownerTable])} SET objects_deleted_at = ms_now()
        WHERE id = ${ownerId} AND status = ANY(${sql.array([...files.endedStatuses], 'text')})
          AND objects_deleted_at IS NULL`);
    },
  };
}
