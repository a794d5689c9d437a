import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import {
  ConflictError,
  ConnectionError,
  RateLimitError,
  ServerError,
  ValidationError,
  Valise,
} from '../../sdk/src/index.ts';

// The request core against a tiny local server that misbehaves on cue.

type Seen = { method: string; url: string; idempotencyKey: string | undefined; at: number; body: string };
type Script = (request: IncomingMessage, response: ServerResponse, attempt: number) => void;

async function scriptedServer(script: Script) {
  const seen: Seen[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    seen.push({
      method: request.method ?? '',
      url: request.url ?? '',
      idempotencyKey: request.headers['idempotency-key'] as string | undefined,
      at: Date.now(),
      body: Buffer.concat(chunks).toString(),
    });
    script(request, response, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_test', ...headers });
  response.end(JSON.stringify(body));
};
const apiError = (code: string, param: string | null = null) => ({
  error: { code, message: code, param, doc_url: null, request_id: 'req_test' },
});
const folder = { id: 'f', object: 'folder', name: 'x', transfer_count: 0, created_at: '2026-01-01T00:00:00Z' };

test('a 429 with Retry-After is waited out, then the POST succeeds with the same Idempotency-Key', async (t) => {
  const server = await scriptedServer((_request, response, attempt) =>
    attempt === 1 ? json(response, 429, apiError('rate_limited'), { 'retry-after': '1' }) : json(response, 201, folder),
  );
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl, retryBaseDelayMs: 10 });
  const created = await valise.folders.create({ name: 'x' });
  t.is(created.id, 'f');
  t.is(server.seen.length, 2);
  const [first, second] = server.seen;
  t.truthy(first?.idempotencyKey);
  t.is(second?.idempotencyKey, first?.idempotencyKey);
  t.is(second?.body, first?.body);
  t.true((second?.at ?? 0) - (first?.at ?? 0) >= 950, 'Retry-After: 1 was honoured');
});

test('503s are retried with backoff, keeping the Idempotency-Key', async (t) => {
  const server = await scriptedServer((_request, response, attempt) =>
    attempt < 3 ? json(response, 503, apiError('internal_error')) : json(response, 201, folder),
  );
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl, retryBaseDelayMs: 100 });
  await valise.folders.create({ name: 'x' });
  t.is(server.seen.length, 3);
  t.is(new Set(server.seen.map((s) => s.idempotencyKey)).size, 1);
  const [a, b, c] = server.seen.map((s) => s.at);
  // Equal jitter: at least half of 100 ms, then at least half of 200 ms.
  t.true((b ?? 0) - (a ?? 0) >= 45);
  t.true((c ?? 0) - (b ?? 0) >= 95);
});

test('a dropped connection is retried once and the POST goes through with the same key', async (t) => {
  const server = await scriptedServer((request, response, attempt) => {
    if (attempt === 1) request.socket.destroy();
    else json(response, 201, folder);
  });
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl, retryBaseDelayMs: 10 });
  await valise.folders.create({ name: 'x' });
  t.is(server.seen.length, 2);
  t.is(server.seen[0]?.idempotencyKey, server.seen[1]?.idempotencyKey);
});

test('an error answer whose body the closed connection cut short is still its status: a 409 is a ConflictError, not retried', async (t) => {
  // As the upload route refuses a busy upload: the answer, then the connection closed under it.
  const server = await scriptedServer((_request, response) => {
    response.writeHead(409, {
      'content-type': 'application/json',
      'content-length': '200',
      'x-request-id': 'req_test',
    });
    response.write('{"error":{"code":"validation_');
    setTimeout(() => response.socket?.destroy(), 50);
  });
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl, retryBaseDelayMs: 5 });
  const error = await t.throwsAsync(valise.folders.create({ name: 'x' }), { instanceOf: ConflictError });
  t.is(error?.status, 409);
  t.is(error?.code, 'unexpected_response');
  t.is(error?.requestId, 'req_test');
  t.is(server.seen.length, 1, 'a 409 is not retried as a connection failure would be');
});

test('retries stop after maxRetries and the last error is thrown with its details', async (t) => {
  const server = await scriptedServer((_request, response) => json(response, 500, apiError('internal_error')));
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl, retryBaseDelayMs: 5, maxRetries: 2 });
  const error = await t.throwsAsync(valise.folders.create({ name: 'x' }), { instanceOf: ServerError });
  t.is(error?.code, 'internal_error');
  t.is(error?.status, 500);
  t.is(error?.requestId, 'req_test');
  t.is(server.seen.length, 3);
});

test('a 400 is not retried; a 429 without Retry-After (a usage cap) is not either', async (t) => {
  const server = await scriptedServer((request, response) =>
    request.method === 'POST'
      ? json(response, 400, apiError('validation_error', 'name'))
      : json(response, 429, apiError('rate_limited')),
  );
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl, retryBaseDelayMs: 5 });
  const invalid = await t.throwsAsync(valise.folders.create({ name: '' }), { instanceOf: ValidationError });
  t.is(invalid?.param, 'name');
  await t.throwsAsync(valise.folders.list(), { instanceOf: RateLimitError });
  t.is(server.seen.length, 2);
});

test('GETs carry no Idempotency-Key; each call of a write gets a fresh one', async (t) => {
  const server = await scriptedServer((request, response) =>
    request.method === 'GET'
      ? json(response, 200, { object: 'list', data: [], has_more: false, next_cursor: null, limit: 20, offset: null })
      : json(response, 201, folder),
  );
  t.teardown(server.close);
  const valise = new Valise({ apiKey: 'svc_test_x', baseUrl: server.baseUrl });
  await valise.folders.list();
  await valise.folders.create({ name: 'x' });
  await valise.folders.create({ name: 'x' }, { idempotencyKey: 'chosen-by-caller' });
  await valise.folders.create({ name: 'x' });
  const [get, ...posts] = server.seen;
  t.is(get?.idempotencyKey, undefined);
  t.is(posts[1]?.idempotencyKey, 'chosen-by-caller');
  t.not(posts[0]?.idempotencyKey, posts[2]?.idempotencyKey);
});

test('a timeout is retried, then reported as code timeout; an abort is not retried', async (t) => {
  const server = await scriptedServer(() => {
    // never answers
  });
  t.teardown(server.close);
  const valise = new Valise({
    apiKey: 'k',
    baseUrl: server.baseUrl,
    timeoutMs: 100,
    retryBaseDelayMs: 5,
    maxRetries: 1,
  });
  const timedOut = await t.throwsAsync(valise.meta.me(), { instanceOf: ConnectionError });
  t.is(timedOut?.code, 'timeout');
  t.is(server.seen.length, 2);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const aborted = await t.throwsAsync(valise.meta.me({ signal: controller.signal, timeoutMs: 10_000 }));
  t.is((aborted as ConnectionError).code, 'aborted');
  t.is(server.seen.length, 3);
});
