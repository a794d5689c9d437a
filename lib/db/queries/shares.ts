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
     * Takes the lease on a (grant, file) link for one request of `length`
     * bytes from byte `start`, unless another request holds it, or the link
     * is spent: its last byte sent and this request starting at byte 0, or
     * `budget` bytes sent in all. Also drops rows of links expired an hour ago.
     */
    async claimLinkUse(use: {
      grantId: string;
      fileId: string;
      holder: string;
      expiresAt: Date;
      start: number;
      length: number;
      budget: number;
    }): Promise<'claimed' | 'in_use' | 'used'> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM download_link_uses WHERE expires_at < ms_now() - interval '1 hour'`);
      const claimed = await db.maybeOne(sql.type(z.object({ holder: z.uuid() }))`
        INSERT INTO download_link_uses AS u (grant_id, file_id, expires_at, holder, held_until)
        VALUES (${use.grantId}, ${use.fileId}, ${sql.timestamp(use.expiresAt)}, ${use.holder},
          ${sql.timestamp(use.expiresAt)})
        ON CONFLICT (grant_id, file_id) DO UPDATE
          SET holder = excluded.holder, held_until = excluded.held_until
          WHERE (u.held_until IS NULL OR u.held_until <= ms_now())
            AND (u.completed_at IS NULL OR ${use.start} > 0)
            AND u.bytes_sent + ${use.length} <= ${use.budget}
        RETURNING holder`);
      if (claimed) return 'claimed';
      const state = await db.maybeOne(sql.type(z.object({ held: z.boolean() }))`
        SELECT held_until IS NOT NULL AND held_until > ms_now() AS held FROM download_link_uses
        WHERE grant_id = ${use.grantId} AND file_id = ${use.fileId}`);
      return state?.held ? 'in_use' : 'used';
    },

    /**
     * The holder's request is over, having sent `bytes`: the lease ends, and
     * with `completed` (the file's last byte was sent) the link is spent.
     */
    async endLinkUse(
      use: { grantId: string; fileId: string; holder: string },
      bytes: number,
      completed: boolean,
    ): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE download_link_uses
        SET holder = NULL, held_until = NULL, bytes_sent = bytes_sent + ${bytes},
          completed_at = CASE WHEN ${completed} THEN coalesce(completed_at, ms_now()) ELSE completed_at END
        WHERE grant_id = ${use.grantId} AND file_id = ${use.fileId} AND holder = ${use.holder}`);
    },
  };
}
