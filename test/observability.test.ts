import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { type ApiResponse, callerAt, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { freePort } from './helpers/ports.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';

// What an operator sees (docs/operations.md, "Metrics", "Traces", "Logs"), end to end: an API
// process and a worker as they run in production, each with its metrics listener, exporting traces
// to an OTLP/HTTP receiver on loopback, logging JSON to stderr; Debian's Prometheus scraping both;
// real traffic through them (a transfer uploaded and scanned, a webhook test ping).

const ROOT = fileURLToPath(new URL('..', import.meta.url));

type Running = { child: ChildProcess; stderr: () => string; stop: () => Promise<void> };

/** `sh scripts/node.sh <entry>`, its stderr kept whole (the logs under test), up once `ready` matches it. */
async function startProcess(entry: string, env: Record<string, string>, ready: RegExp): Promise<Running> {
  const child = spawn('sh', ['scripts/node.sh', entry], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited, delay(20_000).then(() => 'timeout')])) === 'timeout') {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const deadline = Date.now() + 90_000;
  while (!ready.test(stderr)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${entry} exited: ${stderr}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${entry} not ready within 90 s: ${stderr}`);
    }
    await delay(100);
  }
  return { child, stderr: () => stderr, stop };
}

/** An OTLP/HTTP trace receiver: the JSON export requests' spans, flattened. */
type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  service: string;
};

async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.add(String(request.headers['content-type']));
      if (request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as any;
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = resourceSpans.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value
            ?.stringValue;
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                attributes: Object.fromEntries(
                  (span.attributes ?? []).map((a: any) => [a.key, Object.values(a.value ?? {})[0]]),
                ),
                service,
              });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Debian's Prometheus with a configuration of its own, scraping `targets` every second. */
async function startPrometheus(targets: Record<string, string>) {
  const folder = await mkdtemp(join(tmpdir(), 'valise-prometheus-'));
  const port = await freePort();
  const jobs = Object.entries(targets).map(
    ([job, target]) => `  - job_name: ${job}\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  await writeFile(
    join(folder, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n${jobs.join('')}`,
  );
  const child = spawn(
    'prometheus',
    [
      `--config.file=${join(folder, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(folder, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    () =>
      fetch(`${url}/-/ready`).then(
        (response) => (response.ok ? true : undefined),
        () => undefined,
      ),
    60_000,
  );
  return {
    /** An instant PromQL query through the HTTP API: its series' labels and values. */
    query: async (promql: string) => {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as {
        status: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`${promql}: ${JSON.stringify(body)}`);
      return body.data.result.map((series) => ({ labels: series.metric, value: Number(series.value[1]) }));
    },
    close: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
      await rm(folder, { recursive: true, force: true });
    },
  };
}

let fixtures: TestApi;
let receiver: Receiver;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let worker: Running;
let apiProcess: Running;
let prometheus: Awaited<ReturnType<typeof startPrometheus>>;
let call: ReturnType<typeof callerAt>;
let ws: TestWorkspace;
const ports = { api: 0, apiMetrics: 0, workerMetrics: 0 };
/** The traffic below, for every test to look at. */
const traffic: { created?: ApiResponse; ping?: ApiResponse; webhookId?: string; fileSize: number } = { fileSize: 4321 };

test.before(async () => {
  fixtures = await startApi();
  ws = await fixtures.workspace('Observed');
  receiver = await startReceiver({ tls: true });
  otlp = await startOtlpReceiver();
  ports.api = await freePort();
  ports.apiMetrics = await freePort();
  ports.workerMetrics = await freePort();
  // A task queue of their own: only this worker runs the workflows this API starts.
  const taskQueue = `observability-${randomUUID()}`;
  const common = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
  };
  worker = await startProcess(
    'workers/main.ts',
    { ...common, WORKER_METRICS_ADDRESS: `127.0.0.1:${ports.workerMetrics}` },
    /polling task queue/,
  );
  apiProcess = await startProcess(
    'api/main.ts',
    {
      ...common,
      API_HOST: '127.0.0.1',
      API_PORT: String(ports.api),
      PUBLIC_BASE_URL: `http://127.0.0.1:${ports.api}`,
      METRICS_ADDRESS: `127.0.0.1:${ports.apiMetrics}`,
    },
    /listening on/,
  );
  prometheus = await startPrometheus({
    'valise-api': `127.0.0.1:${ports.apiMetrics}`,
    'valise-worker': `127.0.0.1:${ports.workerMetrics}`,
  });
  call = callerAt(`http://127.0.0.1:${ports.api}`);

  // A transfer uploaded (and so scanned by the worker), and a webhook's test ping (one delivery
  // workflow, run to its end by the worker). The key also goes where a careless log would copy
  // it: a query string, and a refused request.
  const created = await call('POST', '/v1/transfers', {
    key: ws.keys.live,
    body: { files: [{ name: 'report.txt', size: traffic.fileSize }] },
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  traffic.created = created;
  const upload = await fetch(created.body.upload_urls[0].url, {
    method: 'PUT',
    body: Buffer.alloc(traffic.fileSize, 'v'),
    headers: { 'content-type': 'application/octet-stream' },
  });
  if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${await upload.text()}`);
  const hook = await call('POST', '/v1/webhooks', { key: ws.keys.live, body: { url: receiver.url('/hook') } });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${hook.text}`);
  traffic.webhookId = hook.body.id;
  traffic.ping = await call('POST', `/v1/webhooks/${hook.body.id}/test`, { key: ws.keys.live });
  await call('GET', `/v1/transfers?api_key=${ws.keys.live}`, { key: ws.keys.live });
  await call('GET', '/v1/transfers', { key: `${ws.keys.live}x` });
  await eventually(async () => {
    const transfer = await call('GET', `/v1/transfers/${created.body.transfer.id}`, { key: ws.keys.live });
    return transfer.body.status === 'active' ? true : undefined;
  }, 60_000);
});

test.after.always(async () => {
  await prometheus?.close();
  await apiProcess?.stop();
  await worker?.stop();
  await otlp?.close();
  await receiver?.close();
  await fixtures?.close();
});

test('Prometheus scrapes both processes: requests by route template, uploads, scans, deliveries, the SDK', async (t) => {
  // Each query waits for the scrape that follows the traffic (every second).
  const series = (promql: string) =>
    eventually(async () => {
      const result = await prometheus.query(promql);
      return result.length > 0 ? result : undefined;
    }, 30_000);

  const created = await series(
    'valise_http_requests_total{job="valise-api", method="POST", route="/v1/transfers", status="201"}',
  );
  t.is(created[0]?.value, 1);
  const pinged = await series('valise_http_requests_total{job="valise-api", route="/v1/webhooks/{id}/test"}');
  t.is(pinged[0]?.labels.status, '200');
  // Every route label is a template: no id, no upload token.
  const routes = await prometheus.query('count by (route) (valise_http_requests_total{job="valise-api"})');
  t.true(
    routes.some((series) => series.labels.route === '/v1/uploads/{token}'),
    JSON.stringify(routes),
  );
  const token = new URL(traffic.created?.body.upload_urls[0].url).pathname.split('/').pop() ?? '';
  for (const series of routes) {
    t.false(series.labels.route?.includes(traffic.created?.body.transfer.id), series.labels.route);
    t.false(series.labels.route?.includes(token), series.labels.route);
  }
  const timed = await series(
    'valise_http_request_duration_seconds_count{job="valise-api", method="POST", route="/v1/transfers", status_class="2xx"}',
  );
  t.is(timed[0]?.value, 1);

  const bytes = await series('sum(valise_upload_bytes_total{job="valise-api"})');
  t.is(bytes[0]?.value, traffic.fileSize);
  const uploads = await series('valise_upload_requests_total{job="valise-api", result="stored"}');
  t.is(uploads[0]?.value, 1);

  const clean = await series('valise_scans_total{job="valise-worker", result="clean"}');
  t.is(clean[0]?.value, 1);
  const delivered = await series('valise_webhook_delivery_attempts_total{job="valise-worker", trigger="test"}');
  t.is(delivered[0]?.labels.outcome, 'succeeded');
  t.is(delivered[0]?.value, 1);
  await series('valise_webhook_delivery_duration_seconds_count{job="valise-worker", outcome="succeeded"}');
  await series('valise_outbox_lag_seconds_count{job="valise-worker"}');
  // The Temporal SDK's own metrics, through the worker's listener.
  const sdk = await series('count({job="valise-worker", __name__=~"temporal_.+"})');
  t.true((sdk[0]?.value ?? 0) > 0);
  // Node's own.
  await series('valise_process_resident_memory_bytes{job="valise-api"}');
});

test('a trace runs from the API request through the delivery workflow to its activity', async (t) => {
  const requestId = traffic.ping?.headers.get('x-request-id');
  t.truthy(requestId);
  const request = await eventually(async () =>
    otlp.spans.find((span) => span.attributes['valise.request_id'] === requestId),
  );
  t.is(request.name, 'POST /v1/webhooks/{id}/test');
  t.is(request.service, 'valise-api');
  t.is(request.attributes['valise.workspace_id'], ws.workspace_id);

  const ancestorsOf = (span: ReceivedSpan) => {
    const chain: ReceivedSpan[] = [];
    for (let at: ReceivedSpan | undefined = span; at?.parentSpanId; ) {
      at = otlp.spans.find((s) => s.traceId === span.traceId && s.spanId === at?.parentSpanId);
      if (at) chain.push(at);
    }
    return chain;
  };
  const descendant = (name: RegExp) =>
    eventually(async () =>
      otlp.spans.find(
        (span) => span.traceId === request.traceId && name.test(span.name) && ancestorsOf(span).includes(request),
      ),
    );
  const workflow = await descendant(/^RunWorkflow:deliverWebhook$/);
  t.is(workflow.service, 'valise-worker');
  const activity = await descendant(/^RunActivity:/);
  t.is(activity.service, 'valise-worker');
  t.true(ancestorsOf(activity).includes(workflow), 'the activity runs under the workflow');
  t.deepEqual([...otlp.contentTypes], ['application/json']);
});

/** The log's lines; anything else on stderr (Node's own warnings) is not a log line. */
const jsonLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('logs are JSON lines with the request id, route and workspace, and never hold a key', async (t) => {
  const lines = jsonLines(apiProcess.stderr());
  const requestId = traffic.created?.headers.get('x-request-id');
  const created = lines.find((line) => line.requestId === requestId);
  t.like(created, {
    name: 'api',
    method: 'POST',
    route: '/v1/transfers',
    status: 201,
    workspace: ws.workspace_id,
    msg: 'request completed',
  });
  const token = new URL(traffic.created?.body.upload_urls[0].url).pathname.split('/').pop() ?? '';
  t.true(token.length > 20);
  t.truthy(
    lines.find((line) => line.route === '/v1/uploads/{token}' && line.status === 200),
    'the upload is logged by its route',
  );
  const refused = lines.find((line) => line.status === 401);
  t.truthy(refused, 'the refused request is logged');
  for (const [name, output] of [
    ['api', apiProcess.stderr()],
    ['worker', worker.stderr()],
  ] as const) {
    t.false(output.includes(ws.keys.live), `${name} logs hold no API key`);
    t.false(output.includes(ws.keys.live.slice(8)), `${name} logs hold no part of an API key`);
    t.false(output.includes(token), `${name} logs hold no upload token`);
  }
  // The worker's lines are JSON too, with their component.
  const workerLines = jsonLines(worker.stderr());
  t.true(workerLines.some((line) => line.name === 'worker' && /polling task queue/.test(String(line.msg))));
});
