import test from 'ava';
import { startApi, type TestApi } from './helpers/api.ts';

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

test('GET /v1/welcome is public and describes the API', async (t) => {
  const response = await api.call('GET', '/v1/welcome');
  t.is(response.status, 200);
  t.is(response.body.object, 'welcome');
  t.is(response.body.api_version, '2026-05-14');
  t.regex(response.body.openapi_url, /\/v1\/openapi\.json$/);
  t.is(response.headers.get('x-service-api-version'), '2026-05-14');
  t.regex(response.headers.get('x-request-id') ?? '', /^req_/);
});

test('GET /v1/welcome promises only what the API does: its key prefixes are real, and the sandbox purge it names exists', async (t) => {
  const response = await api.call('GET', '/v1/welcome');
  const prefixes = response.body.key_prefixes as Record<string, string>;
  const ws = await api.workspace('Welcome');
  for (const key of Object.values(ws.keys)) {
    t.true(
      Object.keys(prefixes).some((prefix) => key.startsWith(prefix)),
      `${key.slice(0, 14)}… has no prefix in ${JSON.stringify(prefixes)}`,
    );
  }
  // The promise is kept by the `sandbox-purge` schedule (docs/sandbox-purge.md; test/sandbox-purge.test.ts).
  t.regex(prefixes.svc_sandbox_ ?? '', /auto-purged after 24 hours/);
  t.notRegex(JSON.stringify(response.body), /planned/);
});

test('GET /v1/me resolves the key into workspace, user, environment and scopes', async (t) => {
  const ws = await api.workspace('Acme');
  for (const environment of ['live', 'test', 'sandbox'] as const) {
    const response = await api.call('GET', '/v1/me', { key: ws.keys[environment] });
    t.is(response.status, 200);
    t.is(response.body.workspace.id, ws.workspace_id);
    t.is(response.body.workspace.name, 'Acme');
    t.is(response.body.user.id, ws.user_id);
    t.is(response.body.environment, environment);
    t.is(response.body.api_key.key_type, 'full');
    t.deepEqual(response.body.scopes, ['*']);
  }
});

test('GET /v1/health reports every component of the real stack as up', async (t) => {
  const response = await api.call('GET', '/v1/health');
  t.is(response.status, 200, JSON.stringify(response.body));
  t.is(response.body.status, 'ok');
  t.deepEqual(Object.keys(response.body.components).sort(), [
    'clamd',
    'database',
    'object_storage',
    'rate_limiter',
    'redis',
    'smtp',
    'temporal',
  ]);
});

test('GET /v1/openapi.json is an OpenAPI 3.1 document labelled 1.0.0 covering the routes', async (t) => {
  const response = await api.call('GET', '/v1/openapi.json');
  t.is(response.status, 200);
  t.is(response.body.openapi, '3.1.0');
  t.is(response.body.info.version, '1.0.0');
  t.truthy(response.body.paths['/v1/api-keys'].post.requestBody);
  t.is(response.body.paths['/v1/api-keys'].post['x-required-scope'], 'api_keys:manage');
  t.truthy(response.body.paths['/v1/api-keys/{id}/rotate'].post);
  t.truthy(response.body.paths['/v1/audit'].get.parameters.find((p: { name: string }) => p.name === 'since'));
});

test('GET /v1/webhooks/events is public and lists at least 43 event types with their payload schemas', async (t) => {
  const response = await api.call('GET', '/v1/webhooks/events');
  t.is(response.status, 200);
  t.is(response.body.object, 'list');
  t.true(response.body.data.length >= 43);
  const downloaded = response.body.data.find((e: { type: string }) => e.type === 'transfer.downloaded');
  t.is(downloaded.data_schema.type, 'object');
  t.truthy(downloaded.description);
  t.truthy(response.body.envelope);
});
