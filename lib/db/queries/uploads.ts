import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';
import { type FileRow, fileRow, type partSchema } from './transfers.ts';

type Part = z.infer<typeof partSchema>;

const LEASE_SECONDS = 120;

// The resumable-upload state of one file. One request at a time may write a
// file: it holds a lease, renewed with every part, that a crashed request's
// successor can take over once it lapses.
export function createUploadQueries(db: CommonQueryMethods) {
  return {
    /** Takes the file's upload lease; null when another live request holds it. */
    async acquireLease(fileId: string): Promise<FileRow | null> {
      return db.maybeOne(sql.type(fileRow)`
        UPDATE transfer_files f
        SET upload_lease_until = ms_now() + make_interval(secs => ${LEASE_SECONDS})
        WHERE f.id = ${fileId} AND (f.upload_lease_until IS NULL OR f.upload_lease_until < ms_now())
        RETURNING f.id, f.transfer_id, f.position, f.name, f.size, f.mime_type, f.object_key, f.upload_state,
          f.multipart_upload_id, f.parts, f.bytes_received, f.data_key_wrapped, f.nonce_prefix, f.encrypted_size,
          f.sha256, f.scan_status, f.scan_signature, f.uploaded_at, f.created_at`);
    },

    async releaseLease(fileId: string): Promise<void> {
      await db.query(sql.typeAlias('void')`UPDATE transfer_files SET upload_lease_until = NULL WHERE id = ${fileId}`);
    },

    /**
     * Starts (or restarts from zero) the file's multipart upload, with fresh key
     * material in server mode: bytes sent again from zero may differ, and one
     * key and nonce must never seal two different plaintexts.
     */
    async begin(fileId: string, uploadId: string, keys: { dataKeyWrapped: string; noncePrefix: Buffer } | null) {
      await db.query(sql.typeAlias('void')`
        UPDATE transfer_files
        SET multipart_upload_id = ${uploadId}, parts = '[]', bytes_received = 0, upload_state = 'uploading',
            sha256 = NULL,
            data_key_wrapped = COALESCE(${keys?.dataKeyWrapped ?? null}, data_key_wrapped),
            nonce_prefix = COALESCE(${keys ? sql.binary(keys.noncePrefix) : null}, nonce_prefix)
        WHERE id = ${fileId}`);
    },

    /** Records a stored part and the bytes it covers; renews the lease. */
    async commitPart(fileId: string, part: Part, bytesReceived: number): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE transfer_files
        SET parts = parts || ${sql.jsonb([part])}, bytes_received = ${bytesReceived},
            upload_lease_until = ms_now() + make_interval(secs => ${LEASE_SECONDS})
        WHERE id = ${fileId}`);
    },

    async complete(fileId: string, sha256: string | null): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE transfer_files
        SET upload_state = 'uploaded', uploaded_at = ms_now(), sha256 = ${sha256}, multipart_upload_id = NULL,
            upload_lease_until = NULL
        WHERE id = ${fileId}`);
    },

    async pendingFiles(transferId: string): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM transfer_files WHERE transfer_id = ${transferId} AND upload_state <> 'uploaded'`);
    },
  };
}
