import { z } from 'zod';
import { SCAN_STATUSES, UPLOAD_STATES } from '../../vocabulary.ts';
import { sql } from '../sql.ts';

// A file Valise stores, whatever holds it (a transfer, an intake document, a
// vault): the columns its resumable, encrypted upload and its scan need. Every
// table in FILE_TABLES has them, with the same names and types, plus the
// column naming its owner; lib/uploads/ works on any of them.

export const FILE_TABLES = ['transfer_files', 'intake_files', 'coffre_items'] as const;
export type FileTable = (typeof FILE_TABLES)[number];

/** The AAD a file's data key is wrapped with: its id, so a key copied onto another row does not open. */
export const storedFileKeyAad = (fileId: string) => fileId;

export const partSchema = z.object({ partNumber: z.number().int(), etag: z.string() });
export type Part = z.infer<typeof partSchema>;

export const storedFileRow = z.object({
  id: z.uuid(),
  name: z.string(),
  size: z.coerce.number().int(),
  mime_type: z.string(),
  object_key: z.string(),
  upload_state: z.enum(UPLOAD_STATES),
  multipart_upload_id: z.string().nullable(),
  parts: z.array(partSchema),
  bytes_received: z.coerce.number().int(),
  data_key_wrapped: z.string().nullable(),
  nonce_prefix: z.instanceof(Buffer).nullable(),
  encrypted_size: z.coerce.number().int().nullable(),
  sha256: z.string().nullable(),
  scan_status: z.enum(SCAN_STATUSES).nullable(),
  scan_signature: z.string().nullable(),
  uploaded_at: z.date().nullable(),
  created_at: z.date(),
});
export type StoredFile = z.infer<typeof storedFileRow>;

/** The stored-file columns of `table`, for a `SELECT` or a `RETURNING`. */
export const storedFileColumns = sql.fragment`
  id, name, size, mime_type, object_key, upload_state, multipart_upload_id, parts, bytes_received,
  data_key_wrapped, nonce_prefix, encrypted_size, sha256, scan_status, scan_signature, uploaded_at, created_at`;
