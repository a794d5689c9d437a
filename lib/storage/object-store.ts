import { finished, Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
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

  const store = {
    client,
    bucket: Bucket,

    sockets: () => poolUsage(agents),

    async startMultipart(key: string): Promise<string> {
      const out = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: key }));
      if (!out.UploadId) throw new Error('S3 returned no UploadId');
      return out.UploadId;
    },

    /**
     * One part, from memory or streamed as it arrives (`length` bytes exactly). A streamed part is
     * sent once, never retried (its bytes are gone), and has no deadline of its own: it lasts as
     * long as its sender takes, watched by the socket timeout; destroying its body aborts it.
     */
    async uploadPart(
      key: string,
      uploadId: string,
      partNumber: number,
      body: Buffer | Readable,
      length: number,
    ): Promise<string> {
      const command = new UploadPartCommand({
        Bucket,
        Key: key,
        UploadId: uploadId,
        PartNumber: partNumber,
        Body: body,
        ContentLength: length,
      });
      if (!(body instanceof Readable)) return etagOf(await client.send(command));
      const abort = new AbortController();
      // The SDK pipes the body into its request, which does not end the request when the body fails.
      const stopWatching = finished(body, (error) => {
        if (error) abort.abort(error);
      });
      try {
        return etagOf(await client.send(command, { abortSignal: abort.signal, requestTimeout: 0 }));
      } finally {
        stopWatching();
      }
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
      return (await store.readSized(key, range)).body;
    },

    /**
     * As `read`, with the length the store announced (its Content-Length, null if none). The
     * body is the HTTP response itself, held to that length by HTTP's framing: one that ends
     * short errors, and it cannot run long.
     */
    async readSized(key: string, range?: { start: number; end: number }) {
      const out = await client.send(
        new GetObjectCommand({ Bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return { body: out.Body as Readable, length: out.ContentLength ?? null };
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

    /** Up to 1,000 keys in one request (S3's limit); idempotent as `remove`. Throws if any failed. */
    async removeMany(keys: readonly string[]): Promise<void> {
      if (keys.length === 0) return;
      const out = await client.send(
        new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0)
        throw new Error(`S3 kept ${failed.length} objects, first ${failed[0]?.Key}: ${failed[0]?.Code}`);
    },

    /** Every object whose key starts with `prefix`, a page of up to 1,000 at a time; idempotent. */
    async removePrefix(prefix: string): Promise<void> {
      for (;;) {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, MaxKeys: 1_000 }));
        const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
        await store.removeMany(keys);
        if (!page.IsTruncated) return;
      }
    },
  };
  return store;
}

export type ObjectStore = ReturnType<typeof createObjectStore>;

function etagOf(out: { ETag?: string | undefined }): string {
  if (!out.ETag) throw new Error('S3 returned no ETag');
  return out.ETag;
}
