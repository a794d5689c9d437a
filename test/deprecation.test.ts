import test from 'ava';
import Joi from 'joi';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { defineRoute } from '../api/route.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// A route marked deprecated in its definition says so on every response (RFC 9745 `Deprecation`,
// RFC 8594 `Sunset`, a `Link` to its successor) and in the OpenAPI document. The route below exists
// for this test only: no route of the API is deprecated yet.

const since = new Date('2026-11-01T00:00:00Z');
const sunset = new Date('2027-05-01T00:00:00Z');

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Deprecation');
  api.server.route(
    defineRoute({
      method: 'GET',
      path: '/v1/deprecation-test/me',
      options: {
        id: 'deprecationTest.me',
        description: 'Who the caller is, the old way',
        tags: ['api', 'meta'],
        plugins: { valise: { deprecated: { since, sunset, successor: '/v1/me' } } },
        response: { schema: Joi.object({ workspace_id: Joi.string().required() }).label('DeprecatedMe') },
      },
      handler: (request) => ({ workspace_id: request.auth.credentials.app?.caller?.workspaceId ?? '' }),
    }),
  );
});
test.after.always(() => api.close());

test('a deprecated route answers with Deprecation, Sunset and a Link to its successor, errors too', async (t) => {
  for (const key of [ws.keys.live, undefined]) {
    const response = await api.call('GET', '/v1/deprecation-test/me', { key });
    t.is(response.status, key ? 200 : 401);
    t.is(response.headers.get('deprecation'), `@${since.getTime() / 1000}`);
    t.is(response.headers.get('sunset'), 'Sat, 01 May 2027 00:00:00 GMT');
    t.is(Date.parse(response.headers.get('sunset') ?? ''), sunset.getTime());
    const link = response.headers.get('link') ?? '';
    t.regex(link, /<\/v1\/me>; rel="successor-version"/);
    t.regex(link, /<[^>]+\/deprecations>; rel="deprecation"; type="text\/html"/);
  }
  const current = await api.call('GET', '/v1/me', { key: ws.keys.live });
  t.is(current.status, 200);
  for (const name of ['deprecation', 'sunset']) t.is(current.headers.get(name), null, name);
});

test('the OpenAPI document flags the route deprecated, says until when and by what it is replaced', (t) => {
  const document = buildOpenApiDocument(api.server) as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const operation = document.paths['/v1/deprecation-test/me']?.get;
  t.is(operation?.deprecated, true);
  t.regex(String(operation?.description), /answers until 2027-05-01T00:00:00\.000Z, replaced by `\/v1\/me`/);
  t.is(document.paths['/v1/me']?.get?.deprecated, undefined);
});
