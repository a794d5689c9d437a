import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Config } from '../config.ts';
import { createS3Client, type PoolOptions, poolUsage } from './s3-client.ts';

export type StoredPart = { partNumber: number; etag: string };

/**
 * The few S3 operations Valise needs, on one bucket. Every body is ciphertext. Each store has
 * its own connection pool (see createS3Client): public downloads read through a store of their
 * own, so however many of them stall, uploads and scans keep their sockets.
 */
export function createObjectStore(config: Config['s3'], pool?: PoolOptions) {
  const { client, agents } = createS3Client(config, pool);
  const Bucket = config.bucket;

  return {
    client,
    bucket: Bucket,

    sockets: () => poolUsage(agents),

    async startMultipart(key: string): Promise<string> {
      const out = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: key }));
      if (!out.UploadId) throw new Error('S3 returned no UploadId');
      return out.UploadId;
    },

    async uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
      const out = await client.send(
        new UploadPartCommand({ Bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }),
      );
      if (!out.ETag) throw new Error('S3 returned no ETag');
      return out.ETag;
    },

    async completeMultipart(key: string, uploadId: string, parts: StoredPart[]): Promise<void> {
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
        }),
      );
    },

    async abortMultipart(key: string, uploadId: string): Promise<void> {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId })).catch(() => {});
    },

    /** A byte range (inclusive end) or the whole object, as a stream. */
    async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
      const out = await client.send(
        new GetObjectCommand({ Bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return out.Body as Readable;
    },

    async size(key: string): Promise<number | null> {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return out.ContentLength ?? null;
      } catch (error) {
        if (error instanceof NotFound || error instanceof NoSuchKey) return null;
        throw error;
      }
    },

    /** Idempotent: deleting what is not there succeeds. */
    async remove(key: string): Promise<void> {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
  };
}

export type ObjectStore = ReturnType<typeof createObjectStore>;
