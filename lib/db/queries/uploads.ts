import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';
import { type FileTable, type Part, type StoredFile, storedFileColumns, storedFileRow } from './stored-files.ts';

// The resumable-upload state of one stored file, in whichever table holds it.
// One request at a time may write a file: it holds a lease, named by the
// request's lease id and renewed while it sends, that a crashed request's
// successor can take over once it lapses. Writes and the release check the
// lease id, so a request that lost its lease can neither write beside its
// successor nor free the successor's lease.
export function createUploadQueries(db: CommonQueryMethods, table: FileTable, leaseMs = 120_000) {
  const leaseSeconds = leaseMs / 1000;
  const files = sql.identifier([table]);
  const id = z.object({ id: z.string() });
  return {
    async file(fileId: string): Promise<StoredFile | null> {
      return db.maybeOne(sql.type(storedFileRow)`SELECT ${storedFileColumns} FROM ${files} WHERE id = ${fileId}`);
    },

    /**
     * The file as stored now, and whether a live request holds its lease (a PUT would be refused),
     * read together: a request that commits its last part and frees the lease between two reads
     * would otherwise be reported idle at the offset before that part.
     */
    async fileAndLease(fileId: string): Promise<{ file: StoredFile; leaseHeld: boolean } | null> {
      const row = await db.maybeOne(sql.type(storedFileRow.extend({ lease_held: z.boolean() }))`
        SELECT ${storedFileColumns},
               upload_lease_until IS NOT NULL AND upload_lease_until >= ms_now() AS lease_held
        FROM ${files} WHERE id = ${fileId}`);
      if (!row) return null;
      const { lease_held: leaseHeld, ...file } = row;
      return { file, leaseHeld };
    },

    /** Takes the file's upload lease for `leaseId`; null when another live request holds it. */
    async acquireLease(fileId: string, leaseId: string): Promise<StoredFile | null> {
      return db.maybeOne(sql.type(storedFileRow)`
        UPDATE ${files}
        SET upload_lease_until = ms_now() + make_interval(secs => ${leaseSeconds}), upload_lease_id = ${leaseId}
        WHERE id = ${fileId} AND (upload_lease_until IS NULL OR upload_lease_until < ms_now())
        RETURNING ${storedFileColumns}`);
    },

    /** Extends the lease while its request still holds it; false once it was lost. */
    async renewLease(fileId: string, leaseId: string): Promise<boolean> {
      const renewed = await db.maybeOneFirst(sql.type(id)`
        UPDATE ${files} SET upload_lease_until = ms_now() + make_interval(secs => ${leaseSeconds})
        WHERE id = ${fileId} AND upload_lease_id = ${leaseId} RETURNING id`);
      return renewed !== null;
    },

    async releaseLease(fileId: string, leaseId: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE ${files} SET upload_lease_until = NULL, upload_lease_id = NULL
        WHERE id = ${fileId} AND upload_lease_id = ${leaseId}`);
    },

    /**
     * Starts (or restarts from zero) the file's multipart upload, with fresh key
     * material in server mode: bytes sent again from zero may differ, and one
     * key and nonce must never seal two different plaintexts.
     */
    async begin(
      fileId: string,
      leaseId: string,
      uploadId: string,
      keys: { dataKeyWrapped: string; noncePrefix: Buffer } | null,
    ): Promise<boolean> {
      const begun = await db.maybeOneFirst(sql.type(id)`
        UPDATE ${files}
        SET multipart_upload_id = ${uploadId}, parts = '[]', bytes_received = 0, upload_state = 'uploading',
            sha256 = NULL,
            data_key_wrapped = COALESCE(${keys?.dataKeyWrapped ?? null}, data_key_wrapped),
            nonce_prefix = COALESCE(${keys ? sql.binary(keys.noncePrefix) : null}, nonce_prefix)
        WHERE id = ${fileId} AND upload_lease_id = ${leaseId} RETURNING id`);
      return begun !== null;
    },

    /**
     * Records a stored part and the bytes it covers, and renews the lease, or frees it with
     * `release` (the request's last part, when the file goes on in a later request): the file as
     * now stored, or null once the lease was lost.
     */
    async commitPart(
      fileId: string,
      leaseId: string,
      part: Part,
      bytesReceived: number,
      release = false,
    ): Promise<StoredFile | null> {
      return db.maybeOne(sql.type(storedFileRow)`
        UPDATE ${files}
        SET parts = parts || ${sql.jsonb([part])}, bytes_received = ${bytesReceived},
            upload_lease_until = ${release ? null : sql.fragment`ms_now() + make_interval(secs => ${leaseSeconds})`},
            upload_lease_id = ${release ? null : leaseId}
        WHERE id = ${fileId} AND upload_lease_id = ${leaseId} RETURNING ${storedFileColumns}`);
    },

    /**
     * Forgets what was sent of an unfinished file (tus termination): no parts, no offset, no key
     * material in use; the next upload begins afresh. False once the lease was lost.
     */
    async reset(fileId: string, leaseId: string): Promise<boolean> {
      const reset = await db.maybeOneFirst(sql.type(id)`
        UPDATE ${files}
        SET multipart_upload_id = NULL, parts = '[]', bytes_received = 0, upload_state = 'pending', sha256 = NULL
        WHERE id = ${fileId} AND upload_lease_id = ${leaseId} AND upload_state <> 'uploaded' RETURNING id`);
      return reset !== null;
    },

    /** Marks the file uploaded and frees its lease: the file as now stored, or null once the lease was lost. */
    async complete(fileId: string, leaseId: string, sha256: string | null): Promise<StoredFile | null> {
      return db.maybeOne(sql.type(storedFileRow)`
        UPDATE ${files}
        SET upload_state = 'uploaded', uploaded_at = ms_now(), sha256 = ${sha256}, multipart_upload_id = NULL,
            upload_lease_until = NULL, upload_lease_id = NULL
        WHERE id = ${fileId} AND upload_lease_id = ${leaseId} RETURNING ${storedFileColumns}`);
    },
  };
}
