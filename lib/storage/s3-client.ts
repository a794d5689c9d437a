import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { S3Client, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-s3';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import type { Config } from '../config.ts';

// The one place an S3 client is configured: the object stores (object-store.ts), the public
// downloads' pool (lib/transfers/download-gate.ts), the health probe (api/health-probes.ts) and
// scripts/ensure-bucket.ts all take theirs from createS3Client.

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
  // Signs requests without hashing their bodies. Over plain HTTP the SDK otherwise puts the SHA-256
  // of every in-memory body in the signature, and the store recomputes it: two full hashes of every
  // part written. What that hash would protect is protected already: every stored body is
  // AES-256-GCM segments whose tags are checked on every read, and the SDK's CRC-32 of each part is
  // still sent and checked by the store. The request itself (method, key, headers, time) stays
  // signed. A body the SDK streams with its own framing has set the header already: kept.
  const unsignedPayload: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => (args) => {
    const headers = (args.request as { headers?: Record<string, string> }).headers;
    if (headers && !Object.keys(headers).some((name) => name.toLowerCase() === 'x-amz-content-sha256')) {
      headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
    }
    return next(args);
  };
  client.middlewareStack.addRelativeTo(unsignedPayload, {
    name: 'valiseUnsignedPayload',
    relation: 'before',
    toMiddleware: 'httpSigningMiddleware',
  });
  return { client, agents };
}

/** Sockets of a pool: in use, and calls waiting for one. */
export function poolUsage(agents: ReturnType<typeof createS3Client>['agents']) {
  const count = (lists: NodeJS.ReadOnlyDict<unknown[]>) =>
    Object.values(lists).reduce((sum, list) => sum + (list?.length ?? 0), 0);
  return {
    active: count(agents.http.sockets) + count(agents.https.sockets),
    queued: count(agents.http.requests) + count(agents.https.requests),
  };
}
