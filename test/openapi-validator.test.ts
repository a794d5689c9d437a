import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Valise } from '../sdk/src/index.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import {
  checkTrafficAgainstOpenApi,
  createOpenApiValidator,
  type Exchange,
  type OpenApiDocument,
} from './helpers/openapi-check.ts';
import { content, createTransfer, fetchBytes, put, waitForTransfer } from './helpers/transfers.ts';

// A validator built from GET /v1/openapi.json (test/helpers/openapi-check.ts: ajv, JSON Schema
// 2020-12, in process, as a validating proxy would check) watches every exchange of a server
// while a representative client session runs: create, upload, get, share, download, folders,
// webhooks, rules, API keys, the SDK's send, and the error answers (400, 401, 403, 404, 410, 416,
// 422, 429). Every answer must be documented and match its schema; every request the server
// accepted must be valid by the document. Then the validator is shown to fail on wrong documents.

let api: TestApi;
let ws: TestWorkspace;
let traffic: ReturnType<typeof checkTrafficAgainstOpenApi>;
let document: OpenApiDocument;
const exchanges: Exchange[] = [];

test.before(async () => {
  api = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
  document = (await api.call('GET', '/v1/openapi.json')).body;
  traffic = checkTrafficAgainstOpenApi(api.server, document, exchanges);
  ws = await api.workspace('OpenAPI validator');
});
test.after.always(() => api.close());

const idempotent = () => ({ 'Idempotency-Key': `oa-${randomUUID()}` });

async function session(t: import('ava').ExecutionContext) {
  const key = ws.keys.live;
  const expect = async (status: number, call: Promise<{ status: number; text: string }>) => {
    const response = await call;
    t.is(response.status, status, response.text.slice(0, 300));
    return response as Awaited<ReturnType<TestApi['call']>>;
  };
  // Public and meta.
  await expect(200, api.call('GET', '/v1/welcome'));
  await expect(200, api.call('GET', '/v1/health'));
  await expect(200, api.call('GET', '/v1/webhooks/events'));
  await expect(200, api.call('GET', '/v1/me', { key }));

  // Transfers: create (with a password and a title: the NUL-refusing fields), upload, get, list.
  const password = 'correct horse battery';
  const data = content(70_000);
  const created = await createTransfer(api, key, {
    files: [
      { name: 'report.pdf', size: data.length, mime_type: 'application/pdf' },
      { name: 'notes.txt', size: 5, mime_type: 'text/plain' },
    ],
    password,
    transfer_title: 'Quarterly report ✓',
    max_downloads: 50,
  });
  const [first, second] = created.upload_urls;
  if (!first || !second) throw new Error('two upload URLs expected');
  const token = (url: string) => new URL(url).pathname.split('/').pop() ?? '';
  await expect(200, api.call('GET', `/v1/uploads/${token(first.url)}`));
  t.is((await put(first.url, data)).status, 200);
  t.is((await put(second.url, new TextEncoder().encode('hello'))).status, 200);
  await expect(200, api.call('HEAD', `/v1/uploads/${token(first.url)}`));
  const transfer = await waitForTransfer(api, key, created.transfer.id, (row) => row.status === 'active');
  await expect(200, api.call('GET', `/v1/transfers/${transfer.id}`, { key }));
  await expect(200, api.call('GET', '/v1/transfers?limit=2', { key }));
  await expect(404, api.call('GET', `/v1/transfers/${randomUUID()}`, { key }));
  await expect(400, api.call('GET', '/v1/transfers/not-an-id', { key }));
  await expect(422, api.call('POST', `/v1/transfers/${transfer.id}/approve`, { key, body: { decision: 'approved' } }));

  // Shares: the locked view, a wrong and a right password, download links, downloads and ranges.
  const code = created.transfer.short_code;
  await expect(200, api.call('GET', `/v1/shares/${code}`));
  await expect(403, api.call('POST', `/v1/shares/${code}/unlock`, { body: { password: 'wrong password!' } }));
  await expect(200, api.call('POST', `/v1/shares/${code}/unlock`, { body: { password } }));
  // A link serves one completed download: one per download.
  const freshLink = async () => {
    const links = await expect(
      200,
      api.call('POST', `/v1/shares/${code}/download-links`, { body: { password, file_id: first.file_id } }),
    );
    return String(links.body.files?.[0]?.download_url);
  };
  const whole = await fetchBytes(await freshLink());
  t.is(whole.status, 200);
  const ranged = await fetchBytes(await freshLink(), { range: 'bytes=0-99' });
  t.is(ranged.status, 206);
  const outside = await fetch(await freshLink(), { headers: { range: `bytes=${data.length + 10}-` } });
  await outside.arrayBuffer();
  t.is(outside.status, 416);
  await expect(404, api.call('GET', '/v1/shares/nosuchcode'));

  // Folders.
  const folder = await expect(201, api.call('POST', '/v1/folders', { key, body: { name: 'Reports' } }));
  await expect(200, api.call('GET', '/v1/folders', { key }));
  await expect(
    200,
    api.call('PUT', `/v1/transfers/${transfer.id}/folder`, { key, body: { folder_id: folder.body.id } }),
  );
  await expect(200, api.call('DELETE', `/v1/transfers/${transfer.id}/folder`, { key }));

  // Webhooks.
  const hook = await expect(
    201,
    api.call('POST', '/v1/webhooks', {
      key,
      body: { url: 'https://hooks.example.com/openapi', events: ['transfer.created'] },
      headers: idempotent(),
    }),
  );
  await expect(200, api.call('GET', '/v1/webhooks', { key }));
  await expect(200, api.call('PATCH', '/v1/webhooks', { key, body: { id: hook.body.id, name: 'Ops' } }));
  await expect(200, api.call('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { key }));
  await expect(200, api.call('POST', `/v1/webhooks/${hook.body.id}/rotate-secret`, { key }));
  await expect(200, api.call('DELETE', '/v1/webhooks', { key, body: { id: hook.body.id } }));

  // Rules.
  const rule = await expect(
    201,
    api.call('POST', '/v1/rules', {
      key,
      body: { name: 'Archive', trigger_event: 'transfer.created', action_type: 'archive_transfer' },
    }),
  );
  await expect(200, api.call('GET', '/v1/rules', { key }));
  await expect(200, api.call('GET', `/v1/rules/${rule.body.id}`, { key }));
  await expect(200, api.call('PATCH', `/v1/rules/${rule.body.id}`, { key, body: { is_enabled: false } }));
  await expect(200, api.call('GET', `/v1/rules/${rule.body.id}/executions`, { key }));
  await expect(200, api.call('DELETE', `/v1/rules/${rule.body.id}`, { key }));

  // API keys, and the errors of authentication and scope.
  const minted = await expect(
    201,
    api.call('POST', '/v1/api-keys', {
      key,
      body: { name: 'reader', key_type: 'restricted', scopes: ['transfers:read'] },
      headers: idempotent(),
    }),
  );
  await expect(200, api.call('GET', '/v1/api-keys?limit=5', { key }));
  await expect(200, api.call('GET', `/v1/api-keys/${minted.body.id}`, { key }));
  await expect(200, api.call('PATCH', `/v1/api-keys/${minted.body.id}`, { key, body: { description: 'reads' } }));
  await expect(403, api.call('POST', '/v1/folders', { key: minted.body.key, body: { name: 'x' } }));
  const rotated = await expect(
    200,
    api.call('POST', `/v1/api-keys/${minted.body.id}/rotate`, { key, body: { grace_period_hours: 0 } }),
  );
  await expect(200, api.call('DELETE', `/v1/api-keys/${rotated.body.id ?? minted.body.id}`, { key }));
  await expect(401, api.call('GET', '/v1/me'));
  await expect(401, api.call('GET', '/v1/me', { key: 'svc_live_not_a_key' }));
  await expect(400, api.call('POST', '/v1/transfers', { key, body: { files: [] } }));
  const capped = await ws.mintKey({ name: 'capped', key_type: 'restricted', scopes: ['transfers:read'], max_uses: 1 });
  await expect(200, api.call('GET', '/v1/transfers', { key: capped.key }));
  await expect(429, api.call('GET', '/v1/transfers', { key: capped.key }));
  await expect(200, api.call('GET', '/v1/audit?limit=3', { key }));

  // The SDK's own calls: send (create + uploads), get, list.
  const valise = new Valise({ apiKey: key, baseUrl: api.url });
  const sent = await valise.transfers.send({
    files: [{ name: 'sdk.bin', size: 3, stream: () => new Blob([new Uint8Array([1, 2, 3])]).stream() }],
  });
  await valise.transfers.get(sent.transfer.id);
  await valise.transfers.list({ limit: 1 });

  // An ended transfer: gone.
  await expect(200, api.call('DELETE', `/v1/transfers/${transfer.id}`, { key }));
  await expect(410, api.call('GET', `/v1/shares/${code}`));
}

test.serial(
  'every answer, and every request the server accepted, of a client session is valid by the document',
  async (t) => {
    await session(t);
    // Answers are checked once sent: the last ones may still be on their way.
    await new Promise((resolve) => setImmediate(resolve));
    t.true(traffic.checked >= 60, `only ${traffic.checked} exchanges were checked`);
    t.deepEqual(traffic.violations, [], traffic.violations.join('\n'));
  },
);

const clone = (): any => JSON.parse(JSON.stringify(document));
const violationsWith = (wrong: OpenApiDocument) => {
  const validator = createOpenApiValidator(wrong);
  return exchanges.flatMap((exchange) => validator.check(exchange));
};

test.serial('the validator refuses the same traffic against a deliberately wrong document', (t) => {
  t.true(exchanges.length > 0);
  t.deepEqual(violationsWith(clone()), [], 'the right document, re-checked, still agrees');

  // The NUL rule published as it used to be: every title "must contain a NUL".
  const nul = clone();
  nul.paths['/v1/transfers'].post.requestBody.content['application/json'].schema.properties.transfer_title.pattern =
    '\\u0000';
  t.true(violationsWith(nul).some((v) => v.includes('POST /v1/transfers → 201: request body')));

  // A status the route answers, left out.
  const no404 = clone();
  delete no404.paths['/v1/transfers/{id}'].get.responses['404'];
  t.true(violationsWith(no404).some((v) => v.includes('GET /v1/transfers/{id} → 404: status 404 is not documented')));

  // A response schema that disagrees with what the server sends.
  const status = clone();
  const transferSchema = status.paths['/v1/transfers/{id}'].get.responses['200'].content['application/json'].schema;
  transferSchema.properties.status = { enum: ['scanning'] };
  t.true(violationsWith(status).some((v) => v.includes('GET /v1/transfers/{id} → 200: response body')));

  // The error envelope made to require a member it never has.
  const envelope = clone();
  envelope.components.schemas.Error.required = ['error', 'errors'];
  t.true(violationsWith(envelope).some((v) => v.includes('→ 401: response body')));
});
