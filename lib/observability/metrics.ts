import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Histogram, register } from 'prom-client';
import type { Config } from '../config.ts';
import type { FileTable } from '../db/queries/stored-files.ts';

// What Prometheus scrapes (docs/operations.md, "Metrics"): every metric Valise defines is declared
// here once, in prom-client's process-wide registry, and recorded where the thing happens (the
// API's request hooks in api/observability.ts, the upload receiver, the scanner, the webhook
// sender and its activity, the outbox relay). Each process serves the registry on a listener of
// its own (METRICS_ADDRESS for the API, WORKER_METRICS_ADDRESS for the worker), never on the
// public API port. Recording costs a map lookup and an addition: it stays on when no one scrapes.

const PREFIX = 'valise_';

/** Latency buckets in seconds, from a cached key lookup to a slow webhook receiver's 30 s. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequests = new Counter({
  name: `${PREFIX}http_requests_total`,
  help: 'API requests answered, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
});

export const httpRequestDuration = new Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time from a request arriving to its response being sent, by method, route template and status class.',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: LATENCY_BUCKETS,
});

export const uploadRequests = new Counter({
  name: `${PREFIX}upload_requests_total`,
  help: 'Upload requests (PUT of a file or a range of it), by the files they write to and their result (stored, rejected, failed).',
  labelNames: ['table', 'result'] as const,
});

export const uploadBytes = new Counter({
  name: `${PREFIX}upload_bytes_total`,
  help: 'Bytes of file content received and stored, by the files they were written to.',
  labelNames: ['table'] as const,
});

export const scans = new Counter({
  name: `${PREFIX}scans_total`,
  help: 'Malware scans of stored files, by result (clean, infected, not_scanned_too_large, error).',
  labelNames: ['result'] as const,
});

export const scanDuration = new Histogram({
  name: `${PREFIX}scan_duration_seconds`,
  help: 'Time to read, decrypt and scan a stored file.',
  buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900],
});

export const webhookDeliveries = new Counter({
  name: `${PREFIX}webhook_delivery_attempts_total`,
  help: 'Webhook delivery attempts, by outcome (succeeded, failed) and trigger (scheduled, test, manual).',
  labelNames: ['outcome', 'trigger'] as const,
});

export const webhookDeliveryDuration = new Histogram({
  name: `${PREFIX}webhook_delivery_duration_seconds`,
  help: 'Time from sending a webhook delivery to its answer (or failure), by outcome.',
  labelNames: ['outcome'] as const,
  buckets: LATENCY_BUCKETS,
});

export const contentIntegrityFailures = new Counter({
  name: `${PREFIX}content_integrity_failures_total`,
  help: 'Stored files read back (downloaded, archived or scanned) whose bytes were not what was stored: altered, truncated, extended, reordered or replaced in the object store.',
});

export const outboxLag = new Histogram({
  name: `${PREFIX}outbox_lag_seconds`,
  help: 'Time from an event being committed to the outbox relay dispatching it.',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
});

/** An upload request's outcome, counted with its bytes when it stored them. */
export function countUpload(table: FileTable, result: 'stored' | 'rejected' | 'failed', bytes = 0): void {
  uploadRequests.inc({ table, result });
  if (bytes > 0) uploadBytes.inc({ table }, bytes);
}

/** A webhook attempt's answer (first attempts from the sender, retries, tests and redeliveries from the activity). */
export function countWebhookAttempt(trigger: string, result: { ok: boolean; durationMs: number }): void {
  const outcome = result.ok ? 'succeeded' : 'failed';
  webhookDeliveries.inc({ outcome, trigger });
  webhookDeliveryDuration.observe({ outcome }, result.durationMs / 1000);
}

export type MetricsListener = { url: string; close: () => Promise<void> };

/**
 * Serves GET /metrics on `address` (the process's metrics address; none: no listener): this
 * process's registry with Node's own metrics, then what `more` adds (the Temporal SDK's, on the
 * worker). A port that is taken is said and skipped: metrics are not worth refusing to serve for.
 */
export async function serveMetrics(
  address: Config['observability']['apiMetrics'],
  options: { more?: () => Promise<string>; log: (message: string) => void },
): Promise<MetricsListener | null> {
  if (address === null) return null;
  collectDefaultMetrics({ prefix: PREFIX });
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    Promise.all([register.metrics(), options.more?.() ?? ''])
      .then(([own, more]) => {
        response.writeHead(200, { 'content-type': register.contentType }).end(own + more);
      })
      .catch((error: Error) => {
        options.log(`metrics: ${error.message}`);
        response.writeHead(500).end();
      });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, resolve);
    });
  } catch (error) {
    options.log(`metrics: not served on ${address.host}:${address.port}: ${(error as Error).message}`);
    return null;
  }
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
