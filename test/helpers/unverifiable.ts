import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createTransferQueries } from '../../lib/db/queries/transfers.ts';
import { sql } from '../../lib/db/sql.ts';
import type { TestApi } from './api.ts';

// Content that can never be verified, made on purpose: what a transfer's scan
// treats as a failure for good. The transfer's worker must not run before
// (its API on a task queue no worker polls yet), or it scans first.

/** Flips one byte in the middle of each stored object of `transferId`: its ciphertext fails authentication. */
export async function alterStoredBytes(api: TestApi, transferId: string): Promise<void> {
  const { client, bucket } = api.services.objects;
  for (const file of await createTransferQueries(api.services.db).files(transferId)) {
    const stored = await client.send(new GetObjectCommand({ Bucket: bucket, Key: file.object_key }));
    const bytes = Buffer.from((await stored.Body?.transformToByteArray()) ?? []);
    if (bytes.length === 0) throw new Error(`file ${file.id} has no stored object`);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: file.object_key, Body: bytes }));
  }
}

/** Replaces each file's upload checksum of `transferId` by another: its plaintext no longer matches it. */
export async function alterRecordedChecksums(api: TestApi, transferId: string): Promise<void> {
  await api.services.db.query(sql.unsafe`
    UPDATE transfer_files SET sha256 = ${'0'.repeat(64)} WHERE transfer_id = ${transferId}`);
}
