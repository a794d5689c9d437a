import test from 'ava';
import { Redis } from 'ioredis';
import { loadConfig } from '../lib/config.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi({ MAX_JSON_BODY_BYTES: String(64 * 1024) });
  ws = await api.workspace('Conventions');
});
test.after.always(() => api.close());

const restricted = (name: string) => ({ name, key_type: 'restricted', scopes: ['transfers:read'] });

test('every response carries X-Request-Id and X-Service-Api-Version, errors included', async (t) => {
  for (const response of [
    await api.call('GET', '/v1/welcome'),
    await api.call('GET', '/v1/me'),
    await api.call('GET', '/v1/nowhere', { key: ws.keys.live }),
  ]) {
    t.regex(response.headers.get('x-request-id') ?? '', /^req_[\w-]{16}$/);
    t.is(response.headers.get('x-service-api-version'), '2026-05-14');
  }
  const error = await api.call('GET', '/v1/me');
  t.is(error.body.error.request_id, error.headers.get('x-request-id'));
  t.deepEqual(Object.keys(error.body.error).sort(), ['code', 'doc_url', 'message', 'param', 'request_id']);
  t.regex(error.body.error.doc_url, /errors#missing_api_key$/);
});

test('routes answer under both /v1/… and the bare path', async (t) => {
  const prefixed = await api.call('GET', '/v1/me', { key: ws.keys.live });
  const bare = await api.call('GET', '/me', { key: ws.keys.live });
  t.is(bare.status, 200);
  t.deepEqual(bare.body, prefixed.body);
  t.is((await api.call('GET', '/welcome?x=1')).status, 200);
});

test('unknown routes and methods give 404 not_found in the envelope', async (t) => {
  for (const [method, path] of [
    ['GET', '/v1/does-not-exist'],
    ['PUT', '/v1/me'],
    ['GET', '/'],
  ] as const) {
    const response = await api.call(method, path, { key: ws.keys.live });
    t.is(response.status, 404, `${method} ${path}`);
    t.is(response.body.error.code, 'not_found');
  }
});

test('CORS: preflight is answered and custom headers are exposed', async (t) => {
  const preflight = await fetch(`${api.url}/v1/api-keys`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://app.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, idempotency-key',
    },
  });
  t.is(preflight.status, 200);
  t.truthy(preflight.headers.get('access-control-allow-origin'));
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /Idempotency-Key/i);
  const simple = await fetch(`${api.url}/v1/welcome`, { headers: { origin: 'https://app.example' } });
  t.regex(simple.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
});

test('malformed JSON gives 400 validation_error, oversized bodies 413, wrong content types 415', async (t) => {
  const malformed = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    rawBody: '{"name": ',
    headers: { 'content-type': 'application/json' },
  });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.code, 'validation_error');
  const huge = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { name: 'x'.repeat(70 * 1024) } });
  t.is(huge.status, 413);
  t.is(huge.body.error.code, 'validation_error');
  const form = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    rawBody: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(form.status, 415);
  t.is(form.body.error.code, 'validation_error');
});

test('validation errors name the offending field in param', async (t) => {
  const badId = await api.call('GET', '/v1/api-keys/not-a-uuid', { key: ws.keys.live });
  t.is(badId.status, 400);
  t.is(badId.body.error.param, 'id');
  const badQuery = await api.call('GET', '/v1/audit?since=yesterday', { key: ws.keys.live });
  t.is(badQuery.status, 400);
  t.is(badQuery.body.error.param, 'since');
  const unknownField = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { ...restricted('x'), colour: 'blue' },
  });
  t.is(unknownField.status, 400);
  t.is(unknownField.body.error.param, 'colour');
  const nul = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('a\u0000b') });
  t.is(nul.status, 400);
  t.is(nul.body.error.param, 'name');
  const ancient = await api.call('GET', '/v1/audit?since=-271821-04-20T00%3A00%3A00Z', { key: ws.keys.live });
  t.is(ancient.status, 400);
  t.is(ancient.body.error.param, 'since');
  const nulFilter = await api.call('GET', '/v1/audit?action=a%00b', { key: ws.keys.live });
  t.is(nulFilter.status, 400);
  t.is(nulFilter.body.error.param, 'action');
});

test('names and titles: controls, bidi formatting, . and .. and separators are refused in every family, naming the field', async (t) => {
  const own = await api.workspace('Names');
  const key = own.keys.live;
  const file = (name: string) => ({ name, size: 1, mime_type: 'text/plain' });
  const vault = await api.call('POST', '/v1/coffres', { key, body: { name: 'Names' } });
  const intake = await api.call('POST', '/v1/intakes', { key, body: { title: 'Names' } });
  t.is(vault.status, 201, vault.text);
  t.is(intake.status, 201, intake.text);
  const cip = intake.body.publishable_key.key as string;

  // Each field that takes a file name or a title: what it is, the field, and how to send one value in it.
  type Request = [method: string, path: string, body: unknown, key?: string];
  const fields: Array<['file' | 'title', string, (value: string) => Request]> = [
    ['file', 'files.0.name', (v) => ['POST', '/v1/transfers', { files: [file(v)] }]],
    ['file', 'files.0.name', (v) => ['POST', `/v1/intakes/${intake.body.id}/submissions`, { files: [file(v)] }, cip]],
    ['file', 'name', (v) => ['POST', `/v1/coffres/${vault.body.id}/items`, file(v)]],
    ['title', 'transfer_title', (v) => ['POST', '/v1/transfers', { files: [file('a.txt')], transfer_title: v }]],
    ['title', 'title', (v) => ['POST', '/v1/intakes', { title: v }]],
    ['title', 'title', (v) => ['PATCH', `/v1/intakes/${intake.body.id}`, { title: v }]],
    ['title', 'name', (v) => ['POST', '/v1/coffres', { name: v }]],
    ['title', 'name', (v) => ['PATCH', `/v1/coffres/${vault.body.id}`, { name: v }]],
    ['title', 'title', (v) => ['POST', '/v1/collections', { title: v }]],
    ['title', 'name', (v) => ['POST', '/v1/folders', { name: v }]],
  ];
  const everywhere = [
    'tab\there',
    'line\nbreak',
    'bell\u0007',
    'del\u007f',
    'c1\u0085',
    'invoice\u202Efdp.exe',
    'iso\u2066late',
    'mark\u200f',
    'line\u2028separator',
  ];
  const fileNamesOnly = ['.', '..', ' .. ', 'a/b.txt', 'a\\b.txt', '../../etc/passwd'];
  for (const [kind, param, request] of fields) {
    for (const value of kind === 'file' ? [...everywhere, ...fileNamesOnly] : everywhere) {
      const [method, path, body, as = key] = request(value);
      const what = `${method} ${path} ${JSON.stringify(value)}`;
      const response = await api.call(method, path, { key: as, body });
      t.is(response.status, 400, `${what} → ${response.text}`);
      t.is(response.body.error?.code, 'validation_error', what);
      t.is(response.body.error?.param, param, what);
    }
  }
});

test('names and titles are stored NFC-normalised and trimmed; ordinary names in any script are kept as sent', async (t) => {
  const own = await api.workspace('Names kept');
  const decomposed = 'Re\u0301sume\u0301 2026.pdf';
  const created = await api.call('POST', '/v1/transfers', {
    key: own.keys.live,
    body: {
      transfer_title: '  Cafe\u0301 contracts ',
      files: [
        { name: decomposed, size: 1 },
        { name: '.profile', size: 1 },
        { name: 'עברית ٢٠٢٦ 日本語.txt', size: 1 },
      ],
    },
  });
  t.is(created.status, 201, created.text);
  const fetched = await api.call('GET', `/v1/transfers/${created.body.transfer.id}`, { key: own.keys.live });
  t.is(fetched.body.transfer_title, 'Caf\u00e9 contracts');
  t.deepEqual(
    fetched.body.files.map((f: { name: string }) => f.name),
    ['R\u00e9sum\u00e9 2026.pdf', '.profile', 'עברית ٢٠٢٦ 日本語.txt'],
  );
});

test('pagination: limit is clamped, has_more and next_cursor walk every item once, newest first', async (t) => {
  const own = await api.workspace('Paging');
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const created = await api.call('POST', '/v1/api-keys', { key: own.keys.test, body: restricted(`k${i}`) });
    ids.push(created.body.id);
  }
  // The bootstrap key is the oldest test key.
  const zero = await api.call('GET', '/v1/api-keys?limit=0', { key: own.keys.test });
  t.is(zero.status, 200);
  t.is(zero.body.limit, 1);
  t.is(zero.body.data.length, 1);
  const big = await api.call('GET', '/v1/api-keys?limit=100000', { key: own.keys.test });
  t.is(big.body.limit, 100);
  t.is(big.body.data.length, 8);
  t.false(big.body.has_more);
  t.is(big.body.next_cursor, null);
  const negative = await api.call('GET', '/v1/api-keys?limit=-5', { key: own.keys.test });
  t.is(negative.body.limit, 1);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor ? `limit=3&cursor=${encodeURIComponent(cursor)}` : 'limit=3';
    const page = await api.call('GET', `/v1/api-keys?${query}`, { key: own.keys.test });
    t.is(page.body.object, 'list');
    seen.push(...page.body.data.map((k: { id: string }) => k.id));
    cursor = page.body.next_cursor;
    t.is(page.body.has_more, cursor !== null);
    pages++;
    // Inserts while paging must not shift later pages.
    if (pages === 1) await api.call('POST', '/v1/api-keys', { key: own.keys.test, body: restricted('late') });
  } while (cursor);
  t.is(pages, 3);
  t.deepEqual(seen.slice(0, 7), [...ids].reverse());
  t.is(new Set(seen).size, 8);
});

test('pagination: legacy offset works; cursors are bound to their list and filters and cannot be forged', async (t) => {
  const own = await api.workspace('Cursors');
  for (let i = 0; i < 3; i++) await api.call('POST', '/v1/api-keys', { key: own.keys.live, body: restricted(`o${i}`) });
  const all = await api.call('GET', '/v1/api-keys?limit=100', { key: own.keys.live });
  const offset = await api.call('GET', '/v1/api-keys?limit=2&offset=1', { key: own.keys.live });
  t.is(offset.body.offset, 1);
  t.deepEqual(
    offset.body.data.map((k: { id: string }) => k.id),
    all.body.data.slice(1, 3).map((k: { id: string }) => k.id),
  );

  const first = await api.call('GET', '/v1/api-keys?limit=1', { key: own.keys.live });
  const cursor = encodeURIComponent(first.body.next_cursor);
  const otherList = await api.call('GET', `/v1/audit?cursor=${cursor}`, { key: own.keys.live });
  t.is(otherList.status, 400);
  t.is(otherList.body.error.param, 'cursor');

  const auditPage = await api.call('GET', '/v1/audit?limit=1&action=api_key.create', { key: own.keys.live });
  const auditCursor = encodeURIComponent(auditPage.body.next_cursor);
  const otherFilter = await api.call('GET', `/v1/audit?limit=1&action=api_key.update&cursor=${auditCursor}`, {
    key: own.keys.live,
  });
  t.is(otherFilter.status, 400);
  t.is(otherFilter.body.error.code, 'validation_error');
  const sameFilter = await api.call('GET', `/v1/audit?limit=1&action=api_key.create&cursor=${auditCursor}`, {
    key: own.keys.live,
  });
  t.is(sameFilter.status, 200);

  const [payload] = (first.body.next_cursor as string).split('.');
  const forged = `${payload}.AAAAAAAAAAAAAAAAAAAAAA`;
  const tampered = await api.call('GET', `/v1/api-keys?cursor=${encodeURIComponent(forged)}`, { key: own.keys.live });
  t.is(tampered.status, 400);
  for (const junk of ['garbage', '..', 'a.b.c', '%F0%9F%92%A9']) {
    const response = await api.call('GET', `/v1/api-keys?cursor=${junk}`, { key: own.keys.live });
    t.is(response.status, 400, junk);
  }
  const both = await api.call('GET', `/v1/api-keys?cursor=${cursor}&offset=2`, { key: own.keys.live });
  t.is(both.status, 400);
});

test('idempotency: same key and body replays the stored response with the replay header', async (t) => {
  const headers = { 'idempotency-key': `replay-${Date.now()}` };
  const first = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('once'), headers });
  const second = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('once'), headers });
  t.is(first.status, 201);
  t.is(second.status, 201);
  t.is(first.headers.get('x-service-idempotent-replay'), null);
  t.is(second.headers.get('x-service-idempotent-replay'), 'true');
  t.deepEqual(second.body, first.body);
});

test('idempotency: the same key with a different body gives 409 idempotency_conflict', async (t) => {
  const headers = { 'idempotency-key': `conflict-${Date.now()}` };
  await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('a'), headers });
  const other = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('b'), headers });
  t.is(other.status, 409);
  t.is(other.body.error.code, 'idempotency_conflict');
});

test('idempotency: a body nested thousands deep is 400 validation_error, not a stack overflow', async (t) => {
  const webhook = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: 'https://hooks.example.com/deep', events: ['*'] },
  });
  t.is(webhook.status, 201, webhook.text);
  const depth = 5000;
  const deep = `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
  const answer = await api.call('POST', `/v1/webhooks/${webhook.body.id}/test`, {
    key: ws.keys.live,
    rawBody: deep,
    headers: { 'content-type': 'application/json', 'idempotency-key': `deep-${Date.now()}` },
  });
  t.is(answer.status, 400, answer.text);
  t.is(answer.body.error.code, 'validation_error');
});

test('idempotency: 50 parallel identical requests create exactly one key', async (t) => {
  const own = await api.workspace('Burst');
  const headers = { 'idempotency-key': `burst-${Date.now()}` };
  const responses = await Promise.all(
    Array.from({ length: 50 }, () =>
      api.call('POST', '/v1/api-keys', { key: own.keys.live, body: restricted('burst'), headers }),
    ),
  );
  t.true(responses.every((r) => r.status === 201));
  t.is(new Set(responses.map((r) => r.body.id)).size, 1);
  t.is(responses.filter((r) => r.headers.get('x-service-idempotent-replay') === 'true').length, 49);
  const list = await api.call('GET', '/v1/api-keys?limit=100', { key: own.keys.live });
  t.is(list.body.data.filter((k: { name: string }) => k.name === 'burst').length, 1);
});

test('idempotency: keys outside 8 to 255 characters are rejected; keys are scoped per environment', async (t) => {
  for (const key of ['short', 'x'.repeat(256)]) {
    const response = await api.call('POST', '/v1/api-keys', {
      key: ws.keys.live,
      body: restricted('x'),
      headers: { 'idempotency-key': key },
    });
    t.is(response.status, 400);
    t.is(response.body.error.param, 'Idempotency-Key');
  }
  const headers = { 'idempotency-key': `per-env-${Date.now()}` };
  const live = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('env'), headers });
  const testEnv = await api.call('POST', '/v1/api-keys', { key: ws.keys.test, body: restricted('env'), headers });
  t.is(testEnv.headers.get('x-service-idempotent-replay'), null);
  t.not(live.body.id, testEnv.body.id);
});

test('idempotency: a failed request frees its key so the corrected request can use it', async (t) => {
  const headers = { 'idempotency-key': `mfa-retry-${Date.now()}` };
  const refused = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { name: 'needs mfa' }, headers });
  t.is(refused.status, 401);
  const accepted = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'needs mfa', mfa_code: ws.mfa() },
    headers,
  });
  t.is(accepted.status, 201);
});

test('rate limits: headers on every authenticated response, 429 with Retry-After past the quota', async (t) => {
  // Windows are fixed minutes: start well inside one so the counts cannot reset mid-test.
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoWindow));
  const limited = await startApi({ RATE_LIMIT_READ: '3', RATE_LIMIT_PUBLIC: '2' });
  t.teardown(() => limited.close());
  const own = await limited.workspace('Limited');
  const responses = [];
  // The counting script is sent by its SHA: Redis forgetting it (a restart, SCRIPT FLUSH) costs one reload, no count.
  const redis = new Redis(loadConfig().redis.url, { maxRetriesPerRequest: 1 });
  t.teardown(() => redis.disconnect());
  for (let i = 0; i < 4; i++) {
    if (i === 2) await redis.script('FLUSH');
    responses.push(await limited.call('GET', '/v1/me', { key: own.keys.live }));
  }
  t.deepEqual(
    responses.map((r) => r.status),
    [200, 200, 200, 429],
  );
  t.deepEqual(
    responses.map((r) => r.headers.get('x-ratelimit-remaining')),
    ['2', '1', '0', '0'],
  );
  const [first] = responses;
  t.is(first?.headers.get('x-ratelimit-limit'), '3');
  t.is(first?.headers.get('x-ratelimit-policy'), '3;w=60');
  const reset = Number(first?.headers.get('x-ratelimit-reset'));
  t.true(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 60);
  const refused = responses[3];
  t.is(refused?.body.error.code, 'rate_limited');
  const retryAfter = Number(refused?.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60);
  // Writes draw from their own class; the test environment has its own budget.
  const write = await limited.call('POST', '/v1/api-keys', { key: own.keys.live, body: restricted('w') });
  t.is(write.status, 201);
  t.is((await limited.call('GET', '/v1/me', { key: own.keys.test })).status, 200);
  const publicCalls = [];
  for (let i = 0; i < 3; i++) publicCalls.push((await limited.call('GET', '/v1/welcome')).status);
  t.deepEqual(publicCalls, [200, 200, 429]);
});

test('requests the HTTP parser rejects still get the envelope and a request id', async (t) => {
  const response = await api.call('GET', `/v1/me?cursor=${'x'.repeat(20_000)}`, { key: ws.keys.live });
  t.is(response.status, 431);
  t.is(response.body.error.code, 'validation_error');
  t.is(response.body.error.request_id, response.headers.get('x-request-id'));
  // On the SCIM protocol's paths every answer is SCIM's, this one too (the SCIM tokens' routes keep the envelope).
  const scim = await api.call('GET', `/v1/scim/Users?filter=${'x'.repeat(20_000)}`);
  t.is(scim.status, 431);
  t.regex(scim.headers.get('content-type') ?? '', /^application\/scim\+json/);
  t.deepEqual(scim.body, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
    status: '431',
    detail: 'The request headers are too large.',
  });
  t.truthy(scim.headers.get('x-request-id'));
  const tokens = await api.call('GET', `/v1/scim/tokens?x=${'x'.repeat(20_000)}`);
  t.is(tokens.body.error.code, 'validation_error');
});
