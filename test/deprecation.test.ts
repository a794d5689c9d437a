import test from 'ava';
import Joi from 'joi';
import { deprecatedField } from '../api/deprecation.ts';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { defineRoute } from '../api/route.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// A route marked deprecated in its definition says so on every response (RFC 9745 `Deprecation`,
// RFC 8594 `Sunset`, a `Link` to its successor) and in the OpenAPI document; so does a field, on
// the responses to requests that send it (or, in a response, on every success). The routes below
// exist for this test only: nothing of the API is deprecated yet.

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
  const fieldSunset = new Date('2027-03-01T00:00:00Z');
  api.server.route(
    defineRoute({
      method: 'POST',
      path: '/v1/deprecation-test/echo',
      options: {
        id: 'deprecationTest.echo',
        description: 'Echoes a label',
        tags: ['api', 'meta'],
        validate: {
          query: Joi.object<{ verbose?: boolean; pretty?: boolean }>({
            verbose: Joi.boolean(),
            pretty: deprecatedField(Joi.boolean(), { since, sunset: fieldSunset, successor: 'verbose' }),
          }),
          payload: Joi.object<{ label?: string; title?: string }>({
            label: Joi.string(),
            title: deprecatedField(Joi.string(), { since, sunset: fieldSunset, successor: 'label' }),
          }),
        },
        response: {
          schema: Joi.object({
            label: Joi.string().required(),
            name: deprecatedField(Joi.string(), { since, sunset, successor: 'label' }),
          }).label('DeprecationEcho'),
        },
      },
      handler: (request) => {
        const label = request.payload.label ?? request.payload.title ?? '';
        return { label, name: label };
      },
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

test('a request that sends a deprecated field is answered with the headers; one that does not is not', async (t) => {
  const fieldSunset = 'Mon, 01 Mar 2027 00:00:00 GMT';
  const echo = (query: string, body: object) =>
    api.call('POST', `/v1/deprecation-test/echo${query}`, { key: ws.keys.live, body });
  // The response field `name` is deprecated too, so every success says so, with its own sunset.
  const plain = await echo('', { label: 'a' });
  t.is(plain.status, 200);
  t.is(plain.headers.get('sunset'), 'Sat, 01 May 2027 00:00:00 GMT');
  t.notRegex(plain.headers.get('link') ?? '', /successor-version/);
  // A deprecated request field brings the earliest sunset of all that apply.
  for (const [query, body] of [
    ['', { title: 'b' }],
    ['?pretty=true', { label: 'c' }],
  ] as const) {
    const response = await echo(query, body);
    t.is(response.status, 200, query);
    t.is(response.headers.get('deprecation'), `@${since.getTime() / 1000}`);
    t.is(response.headers.get('sunset'), fieldSunset, `${query} ${JSON.stringify(body)}`);
    t.regex(response.headers.get('link') ?? '', /rel="deprecation"/);
  }
  // A refused request that used a deprecated field is told too: it is the request that must change.
  const refused = await echo('', { title: 42 });
  t.is(refused.status, 400);
  t.is(refused.headers.get('sunset'), fieldSunset);
  const refusedPlain = await echo('', { label: 42 });
  t.is(refusedPlain.status, 400);
  t.is(refusedPlain.headers.get('deprecation'), null);
});

type Properties = { properties: Record<string, Record<string, unknown>> };

test('the OpenAPI document flags deprecated fields: parameters, body and response properties', (t) => {
  const document = buildOpenApiDocument(api.server) as unknown as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const operation = document.paths['/v1/deprecation-test/echo']?.post as {
    parameters: Array<{ name: string; deprecated?: boolean }>;
    requestBody: { content: { 'application/json': { schema: Properties } } };
    responses: Record<string, { content: { 'application/json': { schema: Properties } } }>;
    deprecated?: boolean;
  };
  t.is(operation.deprecated, undefined);
  t.deepEqual(
    operation.parameters.filter((p) => 'name' in p).map((p) => [p.name, p.deprecated ?? false]),
    [
      ['verbose', false],
      ['pretty', true],
    ],
  );
  const body = operation.requestBody.content['application/json'].schema.properties;
  t.is(body.title?.deprecated, true);
  t.regex(String(body.title?.description), /replaced by `label`/);
  t.is(body.label?.deprecated, undefined);
  const response = operation.responses['200']?.content['application/json'].schema.properties;
  t.is(response?.name?.deprecated, true);
  t.is(response?.label?.deprecated, undefined);
});
