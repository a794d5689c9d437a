import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
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
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Config } from '../config.ts';

export type StoredPart = { partNumber: number; etag: string };

/**
 * A connection pool of its own: `maxSockets` connections at most, and how long a socket may
 * stay silent mid-request (a download's pool waits longer, for a recipient's pauses).
 */
export type PoolOptions = { maxSockets: number; socketTimeoutMs?: number };

/**
 * An S3 client with its own bounded keep-alive pool, and a timeout on every phase of every
 * call: waiting for a pooled socket and connecting (`connectTimeoutMs`: a call queued behind a
 * full pool fails rather than waits for ever), until the response head (`requestTimeoutMs`),
 * and silence on the socket while a body streams (`socketTimeoutMs`). Timeouts are retried by
 * the SDK like other transient errors.
 */
export function createS3Client(config: Config['s3'], pool: PoolOptions = { maxSockets: config.maxSockets }) {
  const agentOptions = { keepAlive: true, maxSockets: pool.maxSockets };
  const agents = { http: new Agent(agentOptions), https: new HttpsAgent(agentOptions) };
  const client = new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: true,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    // The options of the SDK's NodeHttpHandler (@smithy/node-http-handler).
    requestHandler: {
      httpAgent: agents.http,
      httpsAgent: agents.https,
      connectionTimeout: config.connectTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: pool.socketTimeoutMs ?? config.socketTimeoutMs,
      socketAcquisitionWarningTimeout: config.connectTimeoutMs,
    },
  });
  return { client, agents };
}

/** Sockets of a pool: in use, and calls waiting for one. */
function poolUsage(agents: ReturnType<typeof createS3Client>['agents']) {
  const count = (lists: NodeJS.ReadOnlyDict<unknown[]>) =>
    Object.values(lists).reduce((sum, list) => sum + (list?.length ?? 0), 0);
  return {
    active: count(agents.http.sockets) + count(agents.https.sockets),
    queued: count(agents.http.requests) + count(agents.https.requests),
  };
}

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
