import test, { type ExecutionContext } from 'ava';
import { z } from 'zod';
import { issueApiKey } from '../lib/api-keys/service.ts';
import { sql } from '../lib/db/sql.ts';
import { type ApiResponse, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { personalColumnsHolding } from './helpers/personal-data.ts';

// SCIM 2.0 provisioning through the real API (docs/scim.md): tokens, Users and Groups with
// filters, paging, PATCH, deprovisioning, the SCIM error body, the SCIM audit and isolation.

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const SCIM_JSON = { 'content-type': 'application/scim+json' };

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

type Provisioned = { ws: TestWorkspace; token: string; tokenId: string };

async function provisioned(name: string): Promise<Provisioned> {
  const ws = await api.workspace(name);
  const created = await api.call('POST', '/v1/scim/tokens', {
    key: ws.keys.live,
    body: { name: 'Entra ID', mfa_code: await ws.nextMfa() },
  });
  if (created.status !== 201) throw new Error(`token: ${created.status} ${created.text}`);
  return { ws, token: created.body.token, tokenId: created.body.id };
}

const scim = (p: Provisioned, method: string, path: string, body?: unknown) =>
  api.call(method, path, { key: p.token, ...(body === undefined ? {} : { body, headers: SCIM_JSON }) });

const newUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER, ENTERPRISE],
  userName,
  externalId: `ext-${userName}`,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  displayName: `Ada ${userName}`,
  active: true,
  emails: [{ value: userName, type: 'work', primary: true }],
  [ENTERPRISE]: { employeeNumber: '42', department: 'Engineering', manager: { value: 'boss-1' } },
  ...extra,
});

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 10)}@example.com`;

function isScimError(t: ExecutionContext, r: ApiResponse, status: number) {
  t.is(r.status, status, r.text);
  t.deepEqual(r.body.schemas, [ERROR]);
  t.is(r.body.status, String(status));
  t.regex(r.headers.get('content-type') ?? '', /^application\/scim\+json/);
}

test('a SCIM token is created once with an MFA code, listed without its value, and revoked', async (t) => {
  const ws = await api.workspace('Tokens');
  const withoutCode = await api.call('POST', '/v1/scim/tokens', { key: ws.keys.live, body: { name: 'x' } });
  t.is(withoutCode.status, 401);
  t.is(withoutCode.body.error.code, 'mfa_required');
  const fromTest = await api.call('POST', '/v1/scim/tokens', {
    key: ws.keys.test,
    body: { name: 'x', mfa_code: await ws.nextMfa() },
  });
  t.is(fromTest.status, 403);
  t.is(fromTest.body.error.code, 'forbidden');

  const created = await api.call('POST', '/v1/scim/tokens', {
    key: ws.keys.live,
    body: { name: 'Okta', mfa_code: await ws.nextMfa() },
  });
  t.is(created.status, 201);
  t.regex(created.body.token, /^scim_[0-9A-Za-z]{48}$/);
  t.is(created.body.token_prefix, created.body.token.slice(0, 11));
  const list = await api.call('GET', '/v1/scim/tokens', { key: ws.keys.live });
  t.is(list.status, 200);
  t.is(list.body.data.length, 1);
  t.false(list.text.includes(created.body.token));

  const token = created.body.token as string;
  t.is((await api.call('GET', '/v1/scim/Users', { key: token })).status, 200);
  // A SCIM token opens nothing but /v1/scim; an API key does not open /v1/scim/Users.
  t.is((await api.call('GET', '/v1/transfers', { key: token })).status, 401);
  t.is((await api.call('GET', '/v1/scim/tokens', { key: token })).status, 401);
  const byKey = await api.call('GET', '/v1/scim/Users', { key: ws.keys.live });
  isScimError(t, byKey, 401);

  const revoked = await api.call('DELETE', `/v1/scim/tokens/${created.body.id}`, { key: ws.keys.live });
  t.is(revoked.status, 200);
  t.true(revoked.body.revoked);
  const after = await api.call('GET', '/v1/scim/Users', { key: token });
  isScimError(t, after, 401);
  t.regex(after.body.detail, /revoked/);
  isScimError(t, await api.call('GET', '/v1/scim/Users'), 401);
});

test('Users: create, get, replace, delete, with meta, the enterprise extension and 409 uniqueness', async (t) => {
  const p = await provisioned('Users CRUD');
  const userName = unique('ada');
  const created = await scim(p, 'POST', '/v1/scim/Users', newUser(userName));
  t.is(created.status, 201, created.text);
  t.regex(created.headers.get('content-type') ?? '', /^application\/scim\+json/);
  const user = created.body;
  t.deepEqual(user.schemas, [USER, ENTERPRISE]);
  t.is(user.userName, userName);
  t.is(user.name.givenName, 'Ada');
  t.is(user[ENTERPRISE].department, 'Engineering');
  t.is(user[ENTERPRISE].manager.value, 'boss-1');
  t.is(user.meta.resourceType, 'User');
  t.is(user.meta.location, `${api.url}/v1/scim/Users/${user.id}`);
  t.is(user.meta.version, 'W/"1"');

  const got = await scim(p, 'GET', `/v1/scim/Users/${user.id}`);
  t.is(got.status, 200);
  t.deepEqual(got.body, user);
  t.is(got.headers.get('etag'), 'W/"1"');
  const unchanged = await api.call('GET', `/v1/scim/Users/${user.id}`, {
    key: p.token,
    headers: { 'if-none-match': 'W/"1"' },
  });
  t.is(unchanged.status, 304);

  const taken = await scim(p, 'POST', '/v1/scim/Users', newUser(userName.toUpperCase()));
  isScimError(t, taken, 409);
  t.is(taken.body.scimType, 'uniqueness');

  const replaced = await scim(p, 'PUT', `/v1/scim/Users/${user.id}`, {
    schemas: [USER],
    userName,
    name: { givenName: 'Augusta' },
    emails: [{ value: userName, primary: true }],
  });
  t.is(replaced.status, 200, replaced.text);
  t.is(replaced.body.name.givenName, 'Augusta');
  t.is(replaced.body.name.familyName, undefined);
  t.is(replaced.body[ENTERPRISE], undefined);
  t.is(replaced.body.meta.version, 'W/"2"');

  const missing = await scim(p, 'POST', '/v1/scim/Users', { schemas: [USER] });
  isScimError(t, missing, 400);
  t.is(missing.body.scimType, 'invalidValue');

  t.is((await scim(p, 'DELETE', `/v1/scim/Users/${user.id}`)).status, 204);
  isScimError(t, await scim(p, 'GET', `/v1/scim/Users/${user.id}`), 404);
  isScimError(t, await scim(p, 'DELETE', `/v1/scim/Users/${user.id}`), 404);
  // The userName is free again.
  t.is((await scim(p, 'POST', '/v1/scim/Users', newUser(userName))).status, 201);
});

test('Users: filters with every operator, value paths, URN attributes and paging', async (t) => {
  const p = await provisioned('Filters');
  const names = ['alpha', 'bravo', 'charlie'].map((n) => unique(n));
  for (const [index, userName] of names.entries()) {
    const body = newUser(userName, { title: index === 0 ? 'CTO' : null, active: index !== 2 });
    t.is((await scim(p, 'POST', '/v1/scim/Users', body)).status, 201);
  }
  const ids = async (filter: string) => {
    const r = await scim(p, 'GET', `/v1/scim/Users?filter=${encodeURIComponent(filter)}`);
    t.is(r.status, 200, `${filter}: ${r.text}`);
    return (r.body.Resources as Array<{ userName: string }>).map((u) => u.userName).sort();
  };
  const [a, b, c] = names as [string, string, string];
  t.deepEqual(await ids(`userName eq "${a.toUpperCase()}"`), [a]);
  t.deepEqual(await ids(`userName ne "${a}" and userName sw "${b.slice(0, 6)}"`), [b]);
  t.deepEqual(await ids(`userName co "${c.slice(3, 12)}"`), [c]);
  t.deepEqual(await ids(`userName ew "${a.slice(-16)}"`), [a]);
  t.deepEqual(await ids('title pr'), [a]);
  t.deepEqual(await ids('active eq false'), [c]);
  t.deepEqual(await ids(`not (active eq false) and (userName eq "${a}" or userName eq "${c}")`), [a]);
  t.deepEqual(await ids(`emails[type eq "work" and value eq "${b}"]`), [b]);
  t.deepEqual(await ids(`emails.value eq "${c}"`), [c]);
  t.deepEqual(await ids(`externalId eq "ext-${a}"`), [a]);
  t.deepEqual(await ids(`${ENTERPRISE}:employeeNumber eq "42" and userName eq "${b}"`), [b]);
  t.deepEqual(await ids(`userName gt "${a}" and userName le "${b}"`), [b]);
  t.deepEqual(await ids('meta.created ge "2000-01-01T00:00:00Z" and userName eq "nobody@example.com"'), []);
  t.deepEqual(await ids(`name.givenName eq "ada" and userName eq "${a}"`), [a]);

  const unsupported = await scim(p, 'GET', `/v1/scim/Users?filter=${encodeURIComponent('password eq "x"')}`);
  isScimError(t, unsupported, 400);
  t.is(unsupported.body.scimType, 'invalidFilter');
  const malformed = await scim(p, 'GET', `/v1/scim/Users?filter=${encodeURIComponent('userName eq')}`);
  isScimError(t, malformed, 400);
  t.is(malformed.body.scimType, 'invalidFilter');
  const injection = await ids(`userName eq "x' OR '1'='1"`);
  t.deepEqual(injection, []);

  // Paging is 1-based; count is clamped; the owner (made outside SCIM) is a User too.
  const all = await scim(p, 'GET', '/v1/scim/Users');
  t.is(all.body.totalResults, 4);
  t.is(all.body.Resources[0].userName, all.body.Resources[0].emails[0].value);
  const page = await scim(p, 'GET', '/v1/scim/Users?startIndex=2&count=2');
  t.like(page.body, { totalResults: 4, startIndex: 2, itemsPerPage: 2 });
  t.deepEqual(
    page.body.Resources.map((u: { id: string }) => u.id),
    all.body.Resources.slice(1, 3).map((u: { id: string }) => u.id),
  );
  const clamped = await scim(p, 'GET', '/v1/scim/Users?startIndex=0&count=100000');
  t.like(clamped.body, { startIndex: 1, itemsPerPage: 4 });
  const none = await scim(p, 'GET', '/v1/scim/Users?count=0');
  t.like(none.body, { totalResults: 4, itemsPerPage: 0, Resources: [] });
  // Past every row, however far (the fuzzer's 1e+308 was once sent to PostgreSQL as a bigint: 500).
  for (const far of ['1e%2B308', '9007199254740993', '99999999999999999999']) {
    for (const resource of ['Users', 'Groups']) {
      const past = await scim(p, 'GET', `/v1/scim/${resource}?startIndex=${far}`);
      t.is(past.status, 200, `${resource} from ${far}: ${past.text}`);
      t.like(past.body, { itemsPerPage: 0, Resources: [] });
      t.true(past.body.startIndex >= 9007199254740992, `${resource} from ${far}: startIndex echoed`);
    }
  }

  const projected = await scim(p, 'GET', `/v1/scim/Users?attributes=userName,name.givenName&filter=userName eq "${a}"`);
  t.deepEqual(Object.keys(projected.body.Resources[0]).sort(), ['id', 'name', 'schemas', 'userName']);
  t.deepEqual(projected.body.Resources[0].name, { givenName: 'Ada' });
  const excluded = await scim(
    p,
    'GET',
    `/v1/scim/Users?excludedAttributes=emails,${ENTERPRISE}&filter=userName eq "${a}"`,
  );
  t.is(excluded.body.Resources[0].emails, undefined);
  t.is(excluded.body.Resources[0][ENTERPRISE], undefined);
  t.is(excluded.body.Resources[0].userName, a);
});

test('PATCH: add, replace and remove by path, value paths and URN paths', async (t) => {
  const p = await provisioned('Patch');
  const userName = unique('grace');
  const { body: user } = await scim(p, 'POST', '/v1/scim/Users', newUser(userName));
  const patched = await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [
      { op: 'replace', path: 'name.familyName', value: 'Hopper' },
      { op: 'add', path: 'title', value: 'Rear Admiral' },
      { op: 'replace', path: 'emails[type eq "work"].value', value: `new-${userName}` },
      { op: 'replace', path: `${ENTERPRISE}:department`, value: 'Navy' },
      { op: 'remove', path: `${ENTERPRISE}:manager` },
    ],
  });
  t.is(patched.status, 200, patched.text);
  t.is(patched.body.name.familyName, 'Hopper');
  t.is(patched.body.title, 'Rear Admiral');
  t.is(patched.body.emails[0].value, `new-${userName}`);
  t.is(patched.body[ENTERPRISE].department, 'Navy');
  t.is(patched.body[ENTERPRISE].manager, undefined);
  const removed = await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'remove', path: 'title' }],
  });
  t.is(removed.body.title, undefined);
  const bad = await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'move', path: 'title', value: 'x' }],
  });
  isScimError(t, bad, 400);
  const noSchema = await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, { Operations: [] });
  isScimError(t, noSchema, 400);
});

test('deactivating a member revokes their API keys at once; reactivating leaves them revoked; the owner stays', async (t) => {
  const p = await provisioned('Deprovision');
  const { body: user } = await scim(p, 'POST', '/v1/scim/Users', newUser(unique('leaver')));
  const key = await issueApiKey(
    api.services,
    { workspaceId: p.ws.workspace_id, userId: user.id, environment: 'live' },
    { name: 'leaver key', key_type: 'full', scopes: ['*'] },
  );
  // Warm the credential cache: the next refusal must not come from a stale entry.
  t.is((await api.call('GET', '/v1/me', { key: key.key })).status, 200);
  t.is((await api.call('GET', '/v1/me', { key: key.key })).status, 200);

  const deactivated = await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', path: 'active', value: false }],
  });
  t.is(deactivated.status, 200);
  t.false(deactivated.body.active);
  const refused = await api.call('GET', '/v1/me', { key: key.key });
  t.is(refused.status, 401);
  t.is(refused.body.error.code, 'revoked_api_key');

  const reactivated = await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', value: { active: true } }],
  });
  t.true(reactivated.body.active);
  t.is((await api.call('GET', '/v1/me', { key: key.key })).body.error.code, 'revoked_api_key');

  const events = await api.services.db.anyFirst(
    sql.type(z.object({ type: z.string() }))`
      SELECT type FROM events WHERE workspace_id = ${p.ws.workspace_id} AND type LIKE 'member.%' ORDER BY created_at, id`,
  );
  t.deepEqual(events, ['member.created', 'member.deactivated', 'member.reactivated']);

  const owner = await scim(p, 'PATCH', `/v1/scim/Users/${p.ws.user_id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', path: 'active', value: false }],
  });
  isScimError(t, owner, 400);
  t.is(owner.body.scimType, 'mutability');
  isScimError(t, await scim(p, 'DELETE', `/v1/scim/Users/${p.ws.user_id}`), 400);
  t.is((await api.call('GET', '/v1/me', { key: p.ws.keys.live })).status, 200);
});

test('deleting a member revokes their keys and erases them', async (t) => {
  const p = await provisioned('Delete');
  const { body: user } = await scim(p, 'POST', '/v1/scim/Users', newUser(unique('gone')));
  const key = await issueApiKey(
    api.services,
    { workspaceId: p.ws.workspace_id, userId: user.id, environment: 'test' },
    { name: 'gone key', key_type: 'full', scopes: ['*'] },
  );
  t.is((await api.call('GET', '/v1/me', { key: key.key })).status, 200);
  t.is((await scim(p, 'DELETE', `/v1/scim/Users/${user.id}`)).status, 204);
  t.is((await api.call('GET', '/v1/me', { key: key.key })).body.error.code, 'revoked_api_key');
  const list = await scim(p, 'GET', `/v1/scim/Users?filter=${encodeURIComponent(`id eq "${user.id}"`)}`);
  t.is(list.body.totalResults, 0);
  const removed = await api.services.db.one(
    sql.type(z.object({ data: z.record(z.string(), z.unknown()) }))`
      SELECT data FROM events WHERE workspace_id = ${p.ws.workspace_id} AND type = 'member.removed'`,
  );
  // The event says which member went, not who they were: it is erased with the rest.
  t.like(removed.data, { member: { user_id: user.id }, removed_by: null, revoked_api_keys: 1 });
  // Erased (docs/gdpr.md, "Erasure"): no declared personal column of any family holds what the
  // identity provider sent about them, the events recorded about them included.
  for (const value of [user.userName, user.displayName, user.externalId]) {
    t.deepEqual(await personalColumnsHolding(api.services.db, value), [], value);
  }
  const row = await api.services.db.one(
    sql.type(z.object({ email: z.string(), user_name: z.string().nullable(), given_name: z.string().nullable() }))`
      SELECT email, user_name, given_name FROM users WHERE id = ${user.id}`,
  );
  t.deepEqual(row, { email: `erased-${user.id}@erased.invalid`, user_name: null, given_name: null });
});

test('Groups: create with members, list without members, PATCH members, replace, delete', async (t) => {
  const p = await provisioned('Groups');
  const { body: one } = await scim(p, 'POST', '/v1/scim/Users', newUser(unique('one')));
  const { body: two } = await scim(p, 'POST', '/v1/scim/Users', newUser(unique('two')));
  const created = await scim(p, 'POST', '/v1/scim/Groups', {
    schemas: [GROUP],
    displayName: 'Engineering',
    externalId: 'grp-1',
    members: [{ value: one.id }],
  });
  t.is(created.status, 201, created.text);
  t.is(created.body.members.length, 1);
  t.is(created.body.members[0].value, one.id);
  t.is(created.body.meta.resourceType, 'Group');
  const group = created.body;

  const listed = await scim(p, 'GET', '/v1/scim/Groups?excludedAttributes=members');
  t.is(listed.body.totalResults, 1);
  t.is(listed.body.Resources[0].members, undefined);
  t.is(listed.body.Resources[0].displayName, 'Engineering');
  const byMember = await scim(
    p,
    'GET',
    `/v1/scim/Groups?filter=${encodeURIComponent(`members[value eq "${one.id}"]`)}`,
  );
  t.is(byMember.body.totalResults, 1);
  const byName = await scim(p, 'GET', `/v1/scim/Groups?filter=${encodeURIComponent('displayName eq "engineering"')}`);
  t.is(byName.body.totalResults, 1);

  const added = await scim(p, 'PATCH', `/v1/scim/Groups/${group.id}`, {
    schemas: [PATCH_OP],
    Operations: [
      { op: 'Add', path: 'members', value: [{ value: two.id }] },
      { op: 'Remove', path: `members[value eq "${one.id}"]` },
      { op: 'Replace', path: 'displayName', value: 'Platform' },
    ],
  });
  t.is(added.status, 200, added.text);
  t.deepEqual(
    added.body.members.map((m: { value: string }) => m.value),
    [two.id],
  );
  t.is(added.body.displayName, 'Platform');

  const stranger = await scim(p, 'PATCH', `/v1/scim/Groups/${group.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', path: 'members', value: [{ value: '00000000-0000-4000-8000-000000000000' }] }],
  });
  isScimError(t, stranger, 400);

  const replaced = await scim(p, 'PUT', `/v1/scim/Groups/${group.id}`, { schemas: [GROUP], displayName: 'Empty' });
  t.deepEqual(replaced.body.members ?? [], []);
  t.is((await scim(p, 'DELETE', `/v1/scim/Groups/${group.id}`)).status, 204);
  isScimError(t, await scim(p, 'GET', `/v1/scim/Groups/${group.id}`), 404);
});

test('discovery: ServiceProviderConfig, ResourceTypes and Schemas', async (t) => {
  const p = await provisioned('Discovery');
  const config = await scim(p, 'GET', '/v1/scim/ServiceProviderConfig');
  t.is(config.status, 200);
  t.true(config.body.patch.supported);
  t.true(config.body.filter.supported);
  t.false(config.body.bulk.supported);
  const types = await scim(p, 'GET', '/v1/scim/ResourceTypes');
  t.deepEqual(
    types.body.Resources.map((r: { id: string }) => r.id),
    ['User', 'Group'],
  );
  const schemas = await scim(p, 'GET', '/v1/scim/Schemas');
  t.deepEqual(
    schemas.body.Resources.map((r: { id: string }) => r.id),
    [USER, ENTERPRISE, GROUP],
  );
  // Each one is where its meta.location says (RFC 7644 §4: a schema by its URN, a resource type by name).
  for (const resource of [...types.body.Resources, ...schemas.body.Resources]) {
    const location = new URL(resource.meta.location);
    const one = await scim(p, 'GET', location.pathname);
    t.is(one.status, 200, `${location.pathname}: ${one.text}`);
    t.deepEqual(one.body, resource);
    t.regex(one.headers.get('content-type') ?? '', /^application\/scim\+json/);
  }
  t.is((await scim(p, 'GET', `/v1/scim/Schemas/${USER.toLowerCase()}`)).body.id, USER, 'URNs are case-insensitive');
  isScimError(t, await scim(p, 'GET', '/v1/scim/ResourceTypes/Printer'), 404);
  isScimError(t, await scim(p, 'GET', '/v1/scim/Schemas/urn:example:nothing'), 404);
  isScimError(t, await scim(p, 'GET', '/v1/scim/Nothing'), 404);
});

test('the OpenAPI document has every SCIM protocol route: SCIM token, application/scim+json, SCIM errors', async (t) => {
  const response = await api.call('GET', '/v1/openapi.json');
  t.is(response.status, 200);
  type Content = Record<string, { schema: Record<string, any> }>;
  type Operation = {
    operationId: string;
    tags: string[];
    security: Array<Record<string, string[]>>;
    requestBody?: { content: Content };
    responses: Record<string, { $ref?: string; content?: Content }>;
    'x-sdk-excluded'?: string;
  };
  const document = response.body as {
    paths: Record<string, Record<string, Operation>>;
    components: {
      securitySchemes: Record<string, { type: string; scheme: string; description: string }>;
      responses: Record<string, { content: Content }>;
      schemas: Record<string, { properties: Record<string, unknown>; required: string[] }>;
    };
  };
  const expected: Record<string, string> = {
    'GET /v1/scim/Users': 'scim.listUsers',
    'POST /v1/scim/Users': 'scim.createUser',
    'GET /v1/scim/Users/{id}': 'scim.getUser',
    'PUT /v1/scim/Users/{id}': 'scim.replaceUser',
    'PATCH /v1/scim/Users/{id}': 'scim.patchUser',
    'DELETE /v1/scim/Users/{id}': 'scim.deleteUser',
    'GET /v1/scim/Groups': 'scim.listGroups',
    'POST /v1/scim/Groups': 'scim.createGroup',
    'GET /v1/scim/Groups/{id}': 'scim.getGroup',
    'PUT /v1/scim/Groups/{id}': 'scim.replaceGroup',
    'PATCH /v1/scim/Groups/{id}': 'scim.patchGroup',
    'DELETE /v1/scim/Groups/{id}': 'scim.deleteGroup',
    'GET /v1/scim/ServiceProviderConfig': 'scim.serviceProviderConfig',
    'GET /v1/scim/ResourceTypes': 'scim.resourceTypes',
    'GET /v1/scim/Schemas': 'scim.schemas',
    'GET /v1/scim/ResourceTypes/{id}': 'scim.getResourceType',
    'GET /v1/scim/Schemas/{id}': 'scim.getSchema',
  };
  // Every route a SCIM token opens is one of them: none is left out of the document.
  const opened = api.server
    .table()
    .filter((route) =>
      (route.settings.auth as { strategies?: string[] } | undefined)?.strategies?.includes('scim-token'),
    )
    .map((route) => `${route.method.toUpperCase()} ${route.path}`);
  t.deepEqual(opened.sort(), Object.keys(expected).sort());

  const scheme = document.components.securitySchemes.scimToken;
  t.like(scheme, { type: 'http', scheme: 'bearer' });
  t.regex(scheme?.description ?? '', /scim_.*POST \/v1\/scim\/tokens.*API keys are refused/s);
  const scimError = document.components.schemas.ScimError;
  t.deepEqual(Object.keys(scimError?.properties ?? {}).sort(), ['detail', 'schemas', 'scimType', 'status']);
  t.deepEqual(scimError?.properties.status, {
    type: 'string',
    description: 'The HTTP status, as a string.',
    pattern: '^[45][0-9]{2}$',
  });

  for (const [key, operationId] of Object.entries(expected)) {
    const [method = '', path = ''] = key.split(' ');
    const operation = document.paths[path]?.[method.toLowerCase()];
    if (!operation) {
      t.fail(`${key} is not in the document`);
      continue;
    }
    t.is(operation.operationId, operationId, key);
    t.true(operation.tags.includes('scim'), `${key}: tags`);
    t.deepEqual(operation.security, [{ scimToken: [] }], `${key}: security`);
    t.truthy(operation['x-sdk-excluded'], `${key}: identity providers, not the SDK, call it`);
    t.is(operation.responses['401']?.$ref, '#/components/responses/ScimUnauthorized', `${key}: 401`);
    t.falsy(operation.responses['403'], `${key}: a SCIM token has no scope to lack`);
    if (operation.requestBody) {
      t.deepEqual(
        Object.keys(operation.requestBody.content).sort(),
        ['application/json', 'application/scim+json'],
        `${key}: request body`,
      );
    }
    for (const [status, answer] of Object.entries(operation.responses)) {
      if (/^(4\d\d|5\d\d)$/.test(status)) {
        const name = answer.$ref?.replace('#/components/responses/', '') ?? '';
        const content = document.components.responses[name]?.content;
        t.deepEqual(
          content,
          { 'application/scim+json': { schema: { $ref: '#/components/schemas/ScimError' } } },
          `${key} → ${status}`,
        );
      } else if (answer.content) {
        t.deepEqual(Object.keys(answer.content), ['application/scim+json'], `${key} → ${status}`);
        const schema = answer.content['application/scim+json']?.schema;
        t.truthy(schema?.properties?.schemas, `${key} → ${status}: a SCIM schema`);
      } else {
        t.true(['204', '304'].includes(status), `${key} → ${status} has no body`);
      }
    }
  }
  // The User with the enterprise extension, the Group, and their lists.
  const userOf = (key: string) => {
    const [method = '', path = ''] = key.split(' ');
    const operation = document.paths[path]?.[method.toLowerCase()];
    return operation?.responses[method === 'POST' ? '201' : '200']?.content?.['application/scim+json']?.schema;
  };
  const user = userOf('GET /v1/scim/Users/{id}');
  t.truthy(user?.properties?.[ENTERPRISE]?.properties?.manager);
  t.truthy(user?.properties?.meta?.properties?.version);
  t.deepEqual(userOf('POST /v1/scim/Users'), user);
  t.deepEqual(userOf('GET /v1/scim/Users')?.properties?.Resources?.items, user);
  t.truthy(userOf('GET /v1/scim/Groups/{id}')?.properties?.members);
  const patch = document.paths['/v1/scim/Users/{id}']?.patch?.requestBody?.content['application/scim+json']?.schema;
  t.deepEqual(patch?.required, ['schemas', 'Operations']);
  t.is(document.paths['/v1/scim/Users/{id}']?.get?.responses['304'] !== undefined, true, '304 with If-None-Match');
  t.is(document.paths['/v1/scim/Users']?.post?.responses['409']?.$ref, '#/components/responses/ScimConflict');
  // The token and audit routes stay API-key routes with the envelope.
  t.deepEqual(document.paths['/v1/scim/tokens']?.get?.security, [{ bearer: [] }]);
  t.is(document.paths['/v1/scim/audit']?.get?.responses['401']?.$ref, '#/components/responses/Unauthorized');
});

test('a SCIM token of workspace B sees none of A’s users or groups', async (t) => {
  const a = await provisioned('Isolation A');
  const b = await provisioned('Isolation B');
  const { body: user } = await scim(a, 'POST', '/v1/scim/Users', newUser(unique('private')));
  const { body: group } = await scim(a, 'POST', '/v1/scim/Groups', { schemas: [GROUP], displayName: 'Secret' });
  for (const path of [`/v1/scim/Users/${user.id}`, `/v1/scim/Groups/${group.id}`]) {
    isScimError(t, await scim(b, 'GET', path), 404);
    isScimError(t, await scim(b, 'PUT', path, newUser(unique('x'))), 404);
    isScimError(
      t,
      await scim(b, 'PATCH', path, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'title' }] }),
      404,
    );
    isScimError(t, await scim(b, 'DELETE', path), 404);
  }
  const users = await scim(b, 'GET', `/v1/scim/Users?filter=${encodeURIComponent(`userName eq "${user.userName}"`)}`);
  t.is(users.body.totalResults, 0);
  t.is((await scim(b, 'GET', '/v1/scim/Groups')).body.totalResults, 0);
  // B cannot put A's member in its own group.
  const adopt = await scim(b, 'POST', '/v1/scim/Groups', {
    schemas: [GROUP],
    displayName: 'x',
    members: [{ value: user.id }],
  });
  isScimError(t, adopt, 400);
  // Nor revoke A's token, nor read A's SCIM audit.
  t.is((await api.call('DELETE', `/v1/scim/tokens/${a.tokenId}`, { key: b.ws.keys.live })).status, 404);
  // B's audit holds B's own attempts (404s on A's ids), none of A's operations.
  const audit = await api.call('GET', '/v1/scim/audit', { key: b.ws.keys.live });
  t.true(audit.body.data.length > 0);
  t.true(audit.body.data.every((e: { scim_token_id: string }) => e.scim_token_id === b.tokenId));
  t.false(audit.body.data.some((e: { response_status: number }) => e.response_status === 201));
});

test('GET /v1/scim/audit: every SCIM operation, newest first, limit clamped, operation filter', async (t) => {
  const p = await provisioned('Audit');
  const { body: user } = await scim(p, 'POST', '/v1/scim/Users', newUser(unique('audited')));
  await scim(p, 'PATCH', `/v1/scim/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', path: 'title', value: 'x' }],
  });
  await scim(p, 'GET', '/v1/scim/Users');
  await scim(p, 'POST', '/v1/scim/Users', newUser(user.userName));
  await scim(p, 'DELETE', `/v1/scim/Users/${user.id}`);

  const all = await api.call('GET', '/v1/scim/audit', { key: p.ws.keys.live });
  t.is(all.status, 200, all.text);
  t.deepEqual(all.body.filter, { limit: 100, operation: null });
  t.deepEqual(
    all.body.data.map((e: { operation: string; response_status: number }) => [e.operation, e.response_status]),
    [
      ['delete_user', 204],
      ['create_user', 409],
      ['list_users', 200],
      ['update_user', 200],
      ['create_user', 201],
    ],
  );
  const [deleted, conflict] = all.body.data;
  t.like(deleted, { resource_type: 'User', resource_id: user.id, scim_token_id: p.tokenId, error_message: null });
  t.regex(conflict.error_message, /userName/);

  const creates = await api.call('GET', '/v1/scim/audit?operation=create_user&limit=1', { key: p.ws.keys.live });
  t.deepEqual(creates.body.filter, { limit: 1, operation: 'create_user' });
  t.is(creates.body.data.length, 1);
  t.true(creates.body.has_more);
  const clamped = await api.call('GET', '/v1/scim/audit?limit=9999', { key: p.ws.keys.live });
  t.is(clamped.body.filter.limit, 500);
  t.is((await api.call('GET', '/v1/scim/audit?limit=0', { key: p.ws.keys.live })).body.filter.limit, 1);
  const wrong = await api.call('GET', '/v1/scim/audit?operation=patch_user', { key: p.ws.keys.live });
  t.is(wrong.status, 400);
  t.is(wrong.body.error.code, 'validation_error');
  const otherEnvironment = await api.call('GET', '/v1/scim/audit', { key: p.ws.keys.test });
  t.deepEqual(otherEnvironment.body.data, []);
});

test('malformed SCIM input gets a SCIM 4xx, never a 500', async (t) => {
  const p = await provisioned('Malformed');
  const { body: user } = await scim(p, 'POST', '/v1/scim/Users', newUser(unique('target')));
  const { body: group } = await scim(p, 'POST', '/v1/scim/Groups', { schemas: [GROUP], displayName: 'G' });
  const patch = (Operations: unknown) => ({ schemas: [PATCH_OP], Operations });
  const cases: Array<[string, string, unknown?]> = [
    ['POST', '/v1/scim/Users', { userName: 42n.toString(), emails: 'a@b.c' }],
    ['POST', '/v1/scim/Users', { userName: 'x@y.z', name: 'Ada' }],
    ['POST', '/v1/scim/Users', { userName: 'x@y.z', active: 'maybe' }],
    ['POST', '/v1/scim/Users', { userName: 'x@y.z', emails: [{ value: 'not an address' }] }],
    ['POST', '/v1/scim/Users', { userName: 'x\u0000@y.z' }],
    ['POST', '/v1/scim/Users', { userName: 'x@y.z', [ENTERPRISE]: 'x' }],
    ['POST', '/v1/scim/Users', [1, 2]],
    ['POST', '/v1/scim/Groups', { displayName: 'x', members: [{ value: 'nope' }] }],
    ['POST', '/v1/scim/Groups', { displayName: 'x', members: 'all' }],
    ['PATCH', `/v1/scim/Users/${user.id}`, patch([{ op: 'replace', path: 'emails[type eq', value: 'x' }])],
    [
      'PATCH',
      `/v1/scim/Users/${user.id}`,
      patch([{ op: 'replace', path: 'emails[type eq "home"].value', value: 'x' }]),
    ],
    ['PATCH', `/v1/scim/Users/${user.id}`, patch([{ op: 'replace', value: 'x' }])],
    ['PATCH', `/v1/scim/Users/${user.id}`, patch([{ op: 'replace', path: 'userName', value: null }])],
    ['PATCH', `/v1/scim/Users/${user.id}`, patch([{ op: 'remove' }])],
    ['PATCH', `/v1/scim/Users/${user.id}`, patch([{ op: 'add', path: 'name', value: 7 }])],
    ['PATCH', `/v1/scim/Users/${user.id}`, patch('x')],
    ['PATCH', `/v1/scim/Groups/${group.id}`, patch([{ op: 'add', path: 'members', value: 'x' }])],
    ['PATCH', `/v1/scim/Groups/${group.id}`, patch([{ op: 'remove', path: 'members[value eq "x"]' }])],
    ['GET', '/v1/scim/Users/not-a-uuid'],
    ['GET', `/v1/scim/Users?filter=${encodeURIComponent('meta.created gt "yesterday"')}`],
    ['GET', `/v1/scim/Users?filter=${encodeURIComponent('active gt true')}`],
    ['GET', `/v1/scim/Users?filter=${encodeURIComponent('emails[value[type eq "x"]]')}`],
    ['GET', `/v1/scim/Users?filter=${encodeURIComponent(`${'('.repeat(60)}active eq true${')'.repeat(60)}`)}`],
    ['GET', '/v1/scim/Users?startIndex=99999999999999999999&count=-5'],
    ['GET', '/v1/scim/Groups?startIndex=abc'],
  ];
  for (const [method, path, body] of cases) {
    const response = await scim(p, method, path, body);
    t.true(response.status >= 200 && response.status < 500, `${method} ${path}: ${response.status} ${response.text}`);
    if (response.status >= 400) {
      t.deepEqual(response.body?.schemas, [ERROR], `${method} ${path}: ${response.text}`);
      t.is(response.body.status, String(response.status));
    }
  }
  const raw = await api.call('POST', '/v1/scim/Users', {
    key: p.token,
    rawBody: '{"userName": ',
    headers: SCIM_JSON,
  });
  isScimError(t, raw, 400);
});
