import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createTransferQueries } from '../../lib/db/queries/transfers.ts';
import type { TestApi } from './api.ts';

// What object storage (MinIO) holds for a transfer: whole objects and
// multipart uploads still open, under the transfer's key prefix.

export async function storedFor(api: TestApi, transferId: string): Promise<{ objects: string[]; uploads: string[] }> {
  const transfer = await createTransferQueries(api.services.db).findById(transferId);
  if (!transfer) throw new Error(`no transfer ${transferId}`);
  return storedUnder(api, `${transfer.environment}/${transfer.workspace_id}/${transfer.id}/`);
}

/** Whole objects and multipart uploads still open under a key prefix (a vault's, an intake's). */
export async function storedUnder(api: TestApi, prefix: string): Promise<{ objects: string[]; uploads: string[] }> {
  const { client, bucket } = api.services.objects;
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  const open = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
  return {
    objects: (listed.Contents ?? []).map((o) => o.Key ?? ''),
    uploads: (open.Uploads ?? []).map((u) => u.Key ?? ''),
  };
}
