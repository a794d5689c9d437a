import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';

// The public side of share links: password attempts per link and client
// address, and the uses of download links (migrations/0009_share_passwords.sql).

/** The counter of a whole link, beside those of each address. */
export const WHOLE_LINK = '*';

export type AttemptWindow = { transferId: string; clientKey: string; windowStart: Date };

const attempts = z.object({ attempts: z.number().int() });

export function createShareQueries(db: CommonQueryMethods) {
  return {
    /**
     * Counts one password attempt (run it in a transaction): the increment
     * happens only while the counter is under `limit`, and the returned count
     * is the new one (null: at its limit, nothing counted). The row stays
     * locked until the transaction ends.
     */
    async countAttempt(
      window: AttemptWindow,
      limit: number,
      /** Counted whatever the limit (an address's first attempt of the window). */
      force = false,
    ): Promise<number | null> {
      return db.maybeOneFirst(sql.type(attempts)`
        INSERT INTO share_password_attempts AS a (transfer_id, client_key, window_start, attempts)
        VALUES (${window.transferId}, ${window.clientKey}, ${sql.timestamp(window.windowStart)}, 1)
        ON CONFLICT (transfer_id, client_key, window_start)
        DO UPDATE SET attempts = a.attempts + 1 WHERE a.attempts < ${limit} OR ${force}
        RETURNING attempts`);
    },

    /** Windows of a link that are over: nothing reads them any more. */
    async forgetOldWindows(transferId: string, before: Date): Promise<void> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM share_password_attempts
        WHERE transfer_id = ${transferId} AND window_start < ${sql.timestamp(before)}`);
    },

    /** A correct password gives back the attempt it was counted as, for the address and the link. */
    async giveBackAttempt(window: AttemptWindow): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE share_password_attempts SET attempts = attempts - 1
        WHERE transfer_id = ${window.transferId}
          AND client_key IN (${window.clientKey}, ${WHOLE_LINK})
          AND window_start = ${sql.timestamp(window.windowStart)}
          AND attempts > 0`);
    },

    /**
     * Takes the lease on a (grant, file) link for one request, unless the link
     * is spent or another request holds it. Also drops rows of links expired
     * for an hour.
     */
    async claimLinkUse(use: {
      grantId: string;
      fileId: string;
      holder: string;
      expiresAt: Date;
    }): Promise<'claimed' | 'in_use' | 'used'> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM download_link_uses WHERE expires_at < ms_now() - interval '1 hour'`);
      const claimed = await db.maybeOne(sql.type(z.object({ holder: z.uuid() }))`
        INSERT INTO download_link_uses AS u (grant_id, file_id, expires_at, holder, held_until)
        VALUES (${use.grantId}, ${use.fileId}, ${sql.timestamp(use.expiresAt)}, ${use.holder},
          ${sql.timestamp(use.expiresAt)})
        ON CONFLICT (grant_id, file_id) DO UPDATE
          SET holder = excluded.holder, held_until = excluded.held_until
          WHERE u.completed_at IS NULL AND (u.held_until IS NULL OR u.held_until <= ms_now())
        RETURNING holder`);
      if (claimed) return 'claimed';
      const state = await db.maybeOne(sql.type(z.object({ completed: z.boolean() }))`
        SELECT completed_at IS NOT NULL AS completed FROM download_link_uses
        WHERE grant_id = ${use.grantId} AND file_id = ${use.fileId}`);
      return state?.completed ? 'used' : 'in_use';
    },

    /** The holder's request sent the file's last byte: the link is spent. */
    async completeLinkUse(use: { grantId: string; fileId: string; holder: string }): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE download_link_uses SET completed_at = ms_now(), holder = NULL, held_until = NULL
        WHERE grant_id = ${use.grantId} AND file_id = ${use.fileId} AND holder = ${use.holder}`);
    },

    /** The holder's request ended before the last byte: another may resume. */
    async releaseLinkUse(use: { grantId: string; fileId: string; holder: string }): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE download_link_uses SET holder = NULL, held_until = NULL
        WHERE grant_id = ${use.grantId} AND file_id = ${use.fileId} AND holder = ${use.holder}`);
    },
  };
}
