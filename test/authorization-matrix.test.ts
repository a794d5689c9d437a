import { mkdir, writeFile } from 'node:fs/promises';
import test from 'ava';
import { holdsScope } from '../lib/api-keys/scopes.ts';
import { issueApiKey } from '../lib/api-keys/service.ts';
import { MCP_TOOLS, type McpToolName } from '../lib/mcp/tools.ts';
import { SCHEMA } from '../lib/scim/resources.ts';
import { type ApiResponse, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { checkTrafficAgainstOpenApi } from './helpers/openapi-check.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import {
  BODIES,
  type Fixtures,
  fill,
  makeFixtures,
  outOfReach,
  paramsOf,
  prefixOf,
  type RouteEntry,
  routeName,
  validatesPayload,
  type WorkspaceFixtures,
} from './helpers/route-fixtures.ts';

// The authorisation matrix (issue #26): every route of the route table, called with workspace A's real
// ids by every kind of credential that is not A's own live key: another workspace's key, SCIM token,
// MCP token and publishable key; A's test and sandbox keys; A's keys that authentication refuses
// (revoked, deactivated, expired, rotated out, outside `allowed_ips`, past a usage cap, a deactivated
// member's); a restricted key lacking the route's scope; A's cip_ key, SCIM and MCP tokens, live,
// revoked or expired; a vault member's invitation, live or revoked; a recipient's personal link; and
// A's own key presented otherwise than as a Bearer header. Each cell gets the refusal the spec and
// docs/api-keys.md, docs/mcp.md, docs/scim.md, docs/intakes.md and docs/coffres.md document, or is
// accepted where the credential is the route's own (an MCP token on the MCP routes, a SCIM token on
// SCIM's, a cip_ key on its intake's submitter routes, a share code or an invitation on their public
// routes). On a public route, a credential put where the capability goes is answered exactly as a
// forged value of the same shape. Every answer, headers included, is searched for A's ids, names,
// addresses and credentials: none may appear that the caller did not send. A new route is in the
// matrix the moment it is in the table; one whose authentication this file does not know fails it.
// The hosted MCP transport's tools, each the route it wraps, get a matrix of their own.

let api: TestApi;
let a: TestWorkspace;
let b: TestWorkspace;
let receiver: Receiver;
let openApi: ReturnType<typeof checkTrafficAgainstOpenApi> | undefined;
test.before(async () => {
  api = await startApi({
    // Hundreds of refused credentials from 127.0.0.1, and a few thousand calls in a minute.
    RATE_LIMIT_AUTH_FAILURES: '100000',
    RATE_LIMIT_READ: '100000',
    RATE_LIMIT_WRITE: '100000',
    RATE_LIMIT_EXPENSIVE: '100000',
    RATE_LIMIT_PUBLIC: '100000',
  });
  // Every answer of the matrix is one its operation documents, refusals included (OPENAPI_CHECK=1 does
  // this for every test server, and fails on close).
  openApi = process.env.OPENAPI_CHECK === '1' ? undefined : checkTrafficAgainstOpenApi(api.server);
  receiver = await startReceiver();
  a = await api.workspace('Authorization matrix A');
  b = await api.workspace('Authorization matrix B');
});
test.after.always(async () => {
  await receiver?.close();
  await api?.close();
  if (Object.keys(report).length === 0) return;
  await mkdir('.cache/logs', { recursive: true });
  await writeFile('.cache/logs/authz-matrix.json', `${JSON.stringify(report, null, 2)}\n`);
});

/** The matrices' figures, written to .cache/logs/authz-matrix.json once both have run. */
const report: { routes?: Record<string, unknown>; tools?: { size: string; tokens: string[] } } = {};

/** How a route authenticates (hapi's `auth` setting): each kind has its own column of answers. */
type RouteKind = 'public' | 'api-key' | 'publishable-key' | 'scim-token' | 'mcp-control' | 'mcp-token';

function kindOf(route: RouteEntry): RouteKind {
  const auth = route.settings.auth as unknown;
  if (auth === false) return 'public';
  const { strategy, strategies } = (auth ?? {}) as { strategy?: string; strategies?: string[] };
  const named = strategy ? [strategy] : (strategies ?? ['api-key']);
  const [only, ...more] = named;
  if (more.length > 0 || !only) throw new Error(`${routeName(route)}: strategies ${named.join(', ')}`);
  if (['api-key', 'publishable-key', 'scim-token', 'mcp-control', 'mcp-token'].includes(only)) return only as RouteKind;
  throw new Error(`${routeName(route)}: an authentication this matrix does not know (${only}): give it a column`);
}

type PrincipalKind =
  | 'owner'
  | 'owner-in-query'
  | 'owner-as-basic'
  | 'other-workspace'
  | 'test'
  | 'sandbox'
  | 'restricted'
  | 'revoked'
  | 'inactive'
  | 'expired'
  | 'rotated'
  | 'ip'
  | 'capped'
  | 'leaver'
  | 'publishable'
  | 'revoked-publishable'
  | 'other-publishable'
  | 'member'
  | 'revoked-member'
  | 'recipient'
  | 'scim'
  | 'revoked-scim'
  | 'other-scim'
  | 'mcp'
  | 'revoked-mcp'
  | 'expired-mcp'
  | 'leaver-mcp'
  | 'other-mcp';

type Principal = { kind: PrincipalKind; label: string; credential: (route: RouteEntry) => string };

/** What a cell must answer: a refusal (status and code; SCIM's routes answer RFC 7644's error body), acceptance, or what a forged value of the same shape gets. */
type Expected =
  | { refused: number; code: string | null; requiredScope?: string }
  | { accepted: number | '2xx' }
  | { asForged: true }
  | { exempt: string };

/** A's live keys refused by authentication, whatever the route. */
const REFUSED_KEYS: Partial<Record<PrincipalKind, { refused: number; code: string }>> = {
  revoked: { refused: 401, code: 'revoked_api_key' },
  inactive: { refused: 401, code: 'revoked_api_key' },
  expired: { refused: 401, code: 'expired_api_key' },
  // A value replaced by a rotation, past its grace period.
  rotated: { refused: 401, code: 'expired_api_key' },
  ip: { refused: 403, code: 'ip_not_allowed' },
  // A usage cap reached: 429 with `Retry-After` (docs/api-keys.md: a cap never resets).
  capped: { refused: 429, code: 'rate_limited' },
  // A member deactivated through SCIM: every key of theirs revoked (docs/scim.md, "Deprovisioning").
  leaver: { refused: 401, code: 'revoked_api_key' },
};
/** Credentials that are no API key: refused as any unknown key by the API-key routes (docs/api-keys.md, docs/mcp.md). */
const NOT_API_KEYS = new Set<PrincipalKind>([
  'publishable',
  'revoked-publishable',
  'other-publishable',
  'member',
  'revoked-member',
  'recipient',
  'scim',
  'revoked-scim',
  'other-scim',
  'mcp',
  'revoked-mcp',
  'expired-mcp',
  'leaver-mcp',
  'other-mcp',
]);
/** Workspace B's credentials: nothing of A's may show in what they are answered, accepted or not. */
const WORKSPACE_B = new Set<PrincipalKind>(['other-workspace', 'other-publishable', 'other-scim', 'other-mcp']);

/** Routes with path parameters that belong to no tenant, and why: every key is answered there. */
const NOT_TENANT_ROUTES: Record<string, string> = {
  'GET /v1/legal/documents/{slug}': 'a published legal document is the same for every workspace and environment',
  'GET /v1/scim/ResourceTypes/{id}': "SCIM's discovery: the resource types every workspace has (RFC 7644 §4)",
  'GET /v1/scim/Schemas/{id}': "SCIM's discovery: the schemas every workspace has (RFC 7644 §4)",
};

/**
 * Routes without path parameters, called by another workspace's key or A's other environments: each
 * acts on the caller's own tenant, with these bodies and these answers. A body naming one of A's ids
 * is refused as the id's own route would refuse it.
 */
const TENANT_CALLS: Record<
  string,
  {
    body?: (ids: Fixtures, caller: PrincipalKind) => unknown | Promise<unknown>;
    expect: (caller: PrincipalKind) => Expected;
  }
> = {
  // The caller's own latest export: its tenant has none (docs/gdpr.md), and A's is out of reach.
  'GET /v1/gdpr/export': {
    expect: () => ({ refused: 404, code: 'not_found' }),
  },
  'POST /v1/api-keys': {
    body: () => ({ name: 'matrix', key_type: 'restricted', scopes: ['transfers:read'] }),
    expect: () => ({ accepted: 201 }),
  },
  'POST /v1/coffres': { body: () => ({ name: 'matrix' }), expect: () => ({ accepted: 201 }) },
  // docs/collections.md: a transfer of another workspace or environment is 404, `param: transfer_ids`.
  'POST /v1/collections': {
    body: (ids) => ({ title: 'matrix', transfer_ids: [ids['/v1/transfers id']] }),
    expect: () => ({ refused: 404, code: 'not_found' }),
  },
  'POST /v1/folders': { body: () => ({ name: 'matrix' }), expect: () => ({ accepted: 201 }) },
  'POST /v1/gdpr/exports': { body: () => ({}), expect: () => ({ accepted: 202 }) },
  'POST /v1/intakes': { body: () => ({ title: 'matrix' }), expect: () => ({ accepted: 201 }) },
  'POST /v1/legal/acceptances': { body: (ids) => legalAcceptance(ids), expect: () => ({ accepted: 201 }) },
  'POST /v1/mcp/tokens': {
    body: () => ({ name: 'matrix', scopes: ['transfers:read'] }),
    expect: () => ({ accepted: 201 }),
  },
  'POST /v1/recipients': { body: () => ({ email: MATRIX_ADDRESS }), expect: () => ({ accepted: 201 }) },
  'POST /v1/rules': {
    body: () => ({ name: 'matrix', trigger_event: 'transfer.created', action_type: 'archive_transfer' }),
    expect: () => ({ accepted: 201 }),
  },
  // docs/scim.md: only a live key creates SCIM tokens (403 forbidden otherwise), with a code.
  'POST /v1/scim/tokens': {
    body: async (_, caller) => ({
      name: 'matrix',
      ...(caller === 'other-workspace' ? { mfa_code: await b.nextMfa() } : {}),
    }),
    expect: (caller) => (caller === 'other-workspace' ? { accepted: 201 } : { refused: 403, code: 'forbidden' }),
  },
  'POST /v1/transfers': { body: () => ({ files: [{ name: 'x.bin', size: 10 }] }), expect: () => ({ accepted: 201 }) },
  'POST /v1/webhooks': {
    body: () => ({ url: receiver.url('/matrix'), events: ['transfer.created'] }),
    expect: () => ({ accepted: 201 }),
  },
  // The webhook's id goes in the body: A's is out of reach.
  'PATCH /v1/webhooks': {
    body: (ids) => ({ id: ids['/v1/webhooks id'], description: 'hijack' }),
    expect: () => ({ refused: 404, code: 'not_found' }),
  },
  'DELETE /v1/webhooks': {
    body: (ids) => ({ id: ids['/v1/webhooks id'] }),
    expect: () => ({ refused: 404, code: 'not_found' }),
  },
};

/** One address for every caller's recipient: the same request, so that a replay across callers could happen. */
const MATRIX_ADDRESS = uniqueAddress('matrix');

/**
 * Every write of the matrix carries this Idempotency-Key, which A's live key used first for the same
 * creations (makeWorld): records belong to the key that made them (api/extensions/idempotency.ts), so
 * no other credential may be answered A's stored response.
 */
const idempotencyKey = (name: string) => `authz-matrix ${name}`;

const legalAcceptance = (ids: Fixtures) => ({ slug: ids['/v1/legal slug'], version: ids.legalVersion });

/** Bodies of the routes the accepted credentials reach: SCIM's, the MCP endpoint's, the public ones. */
const MORE_BODIES: Record<string, (ids: Fixtures) => unknown> = {
  'POST /v1/scim/Users': () => scimUser(uniqueAddress('matrix')),
  'PUT /v1/scim/Users/{id}': (ids) => scimUser(ids.scimUserName ?? ''),
  'PATCH /v1/scim/Users/{id}': () => replaceDisplayName('Renamed'),
  'POST /v1/scim/Groups': () => ({ schemas: [SCHEMA.group], displayName: 'matrix' }),
  'PUT /v1/scim/Groups/{id}': () => ({ schemas: [SCHEMA.group], displayName: 'matrix' }),
  'PATCH /v1/scim/Groups/{id}': () => replaceDisplayName('matrix'),
  'POST /v1/mcp/hosted/{workspaceId}': () => ({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  'POST /v1/mcp/hosted/{workspaceId}/transport': () => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'matrix', version: '1' } },
  }),
  'POST /v1/intakes/{id}/submissions': () => ({ files: [{ name: 'matrix.pdf', size: 10 }] }),
  'POST /v1/shares/{code}/download-links': () => ({}),
  'POST /v1/shares/{code}/archive-link': () => ({}),
  'POST /v1/shares/{code}/unlock': () => ({ password: 'not the password' }),
  'POST /v1/shared-collections/{code}/download-links': (ids) => ({ transfer_id: ids['/v1/transfers id'] }),
  'POST /v1/shared-collections/{code}/archive-link': () => ({}),
  'POST /v1/coffre-access/{token}/items': () => ({ name: 'x.bin', size: 1 }),
  'POST /v1/coffre-access/{token}/archive-link': () => ({}),
};

const scimUser = (userName: string) => ({
  schemas: [SCHEMA.user],
  userName,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  active: true,
  emails: [{ value: userName, type: 'work', primary: true }],
});
const replaceDisplayName = (value: string) => ({
  schemas: [SCHEMA.patch],
  Operations: [{ op: 'replace', path: 'displayName', value }],
});

/** Headers some routes need to reach their handler at all (the tus routes: docs/transfers.md, "Resumable uploads"). */
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const TUS = { 'tus-resumable': '1.0.0' };
const HEADERS: Record<string, Record<string, string>> = {
  'POST /v1/mcp/hosted/{workspaceId}/transport': { accept: 'application/json, text/event-stream' },
  'POST /t/{code}': FORM,
  'POST /c/{code}': FORM,
  'POST /c/{code}/archive': FORM,
  'POST /v1/billing/processor/stripe': { 'content-type': 'application/json' },
  'OPTIONS /v1/uploads/{token}': TUS,
  'GET /v1/uploads/{token}': TUS,
  'POST /v1/uploads/{token}': TUS,
  'PATCH /v1/uploads/{token}': { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
  'DELETE /v1/uploads/{token}': TUS,
};
const RAW_BODIES: Record<string, (ids: Fixtures) => string> = {
  'POST /t/{code}': () => '',
  'POST /c/{code}': (ids) => `transfer_id=${ids['/v1/transfers id']}`,
  'POST /c/{code}/archive': () => '',
  'POST /v1/billing/processor/stripe': () => '{}',
  'PATCH /v1/uploads/{token}': () => 'x',
};

/** Paths of the public routes whose parameter names a file, not a resource. */
const FILE_PATHS: Record<string, string> = {
  'GET /assets/{path*}': '/assets/styles.css',
  'GET /docs/{path*}': '/docs/api-keys',
};

/** The public routes' capability parameters: a share code, a signed link's or upload's token, an invitation. */
const CAPABILITY_PARAMS = new Set(['code', 'token']);

const invalid: Expected = { refused: 401, code: 'invalid_api_key' };
const revokedToken: Expected = { refused: 401, code: 'revoked_api_key' };
const expiredToken: Expected = { refused: 401, code: 'expired_api_key' };
const forbidden: Expected = { refused: 403, code: 'forbidden' };
/** The MCP tokens the MCP routes know and refuse (docs/mcp.md, "Tokens"); another workspace's is 403 there. */
const MCP_TOKEN_REFUSALS: Partial<Record<PrincipalKind, Expected>> = {
  'other-mcp': forbidden,
  'revoked-mcp': revokedToken,
  'expired-mcp': expiredToken,
  // Its member deactivated: refused as revoked.
  'leaver-mcp': revokedToken,
};

/**
 * Where a capability in a public route's path is the credential's own kind: a recipient's personal link
 * is a share code (docs/recipients.md), a vault member's invitation token opens /v1/coffre-access and
 * its page (docs/coffres.md). The member invited has `view` access: what needs more is 403 forbidden,
 * as is every route for a revoked member (the page itself is static, the same for any token).
 */
function capabilityAnswer(route: RouteEntry, principal: PrincipalKind): Expected | null {
  if (principal === 'recipient' && (route.path.startsWith('/v1/shares/') || route.path.startsWith('/t/'))) {
    return { accepted: '2xx' };
  }
  if (principal === 'member' && (route.path.startsWith('/v1/coffre-access/') || route.path.startsWith('/v/'))) {
    return route.method === 'post' ? forbidden : { accepted: 200 };
  }
  if (principal === 'revoked-member' && route.path.startsWith('/v1/coffre-access/')) return forbidden;
  return null;
}

/**
 * A's own live key: refused by the routes of other credentials (docs/scim.md: an API key does not open
 * SCIM's; docs/mcp.md: nor the transport; docs/intakes.md: nor the submitter routes), and presented
 * otherwise than as `Authorization: Bearer`, refused everywhere: in the query string it is no key at all.
 */
function ownerExpectation(kind: RouteKind, principal: PrincipalKind): Expected {
  if (kind === 'public' && principal !== 'owner')
    return {
      exempt: "a public route takes no key: A's key in the Authorization header stands for every way of sending it",
    };
  if (kind === 'public') return { asForged: true };
  if (kind === 'scim-token') return { refused: 401, code: null };
  if (principal === 'owner-in-query') return { refused: 401, code: 'missing_api_key' };
  if (principal === 'owner-as-basic') return invalid;
  if (kind === 'api-key' || kind === 'mcp-control')
    return { exempt: "A's own live key is these routes' caller: every other test of them asserts what it gets" };
  return invalid;
}

function expectation(route: RouteEntry, principal: PrincipalKind, credential: string): Expected {
  const name = routeName(route);
  const scope = route.settings.plugins?.valise?.scope;
  const refusedKey = REFUSED_KEYS[principal];
  const withIds = paramsOf(route.path).length > 0;
  if (principal.startsWith('owner')) return ownerExpectation(kindOf(route), principal);
  switch (kindOf(route)) {
    case 'public':
      return capabilityAnswer(route, principal) ?? { asForged: true };
    case 'publishable-key':
      // docs/intakes.md: only the intake's own publishable key opens its submitter routes; another
      // intake's key gets 404, as if the intake did not exist.
      if (principal === 'publishable') return { accepted: '2xx' };
      if (principal === 'revoked-publishable') return revokedToken;
      if (principal === 'other-publishable') return { refused: 404, code: 'not_found' };
      return invalid;
    case 'scim-token':
      // docs/scim.md: a SCIM token opens the SCIM protocol's routes of its workspace (another's resources
      // are 404); an API key does not (401). Errors there are RFC 7644's body, which has no code.
      if (principal === 'scim') return { accepted: '2xx' };
      if (principal === 'other-scim')
        return withIds && !(name in NOT_TENANT_ROUTES) ? { refused: 404, code: null } : { accepted: '2xx' };
      return { refused: 401, code: null };
    case 'mcp-token':
      // docs/mcp.md: the transport takes an MCP token of the path's workspace and nothing else; GET and
      // DELETE are always 405.
      if (principal === 'mcp') return route.method === 'post' ? { accepted: 200 } : { accepted: 405 };
      return MCP_TOKEN_REFUSALS[principal] ?? invalid;
    case 'mcp-control':
      // docs/mcp.md: an API key or an MCP token of the path's workspace, no scope; 403 forbidden otherwise.
      if (refusedKey) return refusedKey;
      if (principal === 'other-workspace') return forbidden;
      if (principal === 'mcp' || !NOT_API_KEYS.has(principal)) return { accepted: 200 };
      return MCP_TOKEN_REFUSALS[principal] ?? invalid;
    case 'api-key': {
      if (refusedKey) return refusedKey;
      if (NOT_API_KEYS.has(principal)) return invalid;
      if (principal === 'restricted') {
        return scope ? { refused: 403, code: 'scope_missing', requiredScope: scope } : { accepted: '2xx' };
      }
      if (name in NOT_TENANT_ROUTES) return { accepted: 200 };
      if (withIds) {
        const answer = outOfReach(route, principal === 'sandbox');
        return { refused: answer.status, code: answer.code };
      }
      const call = TENANT_CALLS[name];
      if (call) return call.expect(principal);
      if (route.method === 'get') return { accepted: 200 };
      throw new Error(`${name} with ${principal} (${credential.slice(0, 12)}…): give it a TENANT_CALLS entry`);
    }
  }
}

/** Everything of A's the matrix calls with and looks for, made once for every cell. */
type World = {
  fixtures: WorkspaceFixtures;
  ids: Fixtures;
  principals: Principal[];
  /** What no refusal may show: A's identity, A's live resources, and A's credentials. */
  forbidden: { workspace: string[]; live: string[]; credentials: string[] };
  /** The writes A made first under the Idempotency-Keys the cells reuse. */
  replayable: string[];
};

let made: Promise<World> | undefined;
const world = () => {
  made ??= makeWorld();
  return made;
};

async function makeWorld(): Promise<World> {
  const fixtures = await makeFixtures(api, a, receiver);
  const ok = async (status: number, response: Promise<ApiResponse>, what: string) => {
    const got = await response;
    if (got.status !== status) throw new Error(`${what}: ${got.status} ${got.text}`);
    return got.body;
  };
  const scimToken = fixtures.secrets['SCIM token'] ?? '';
  const scimUserName = uniqueAddress('provisioned');
  const provisioned = await ok(
    201,
    api.call('POST', '/v1/scim/Users', { key: scimToken, body: scimUser(scimUserName) }),
    'SCIM user',
  );
  const scimGroup = await ok(
    201,
    api.call('POST', '/v1/scim/Groups', {
      key: scimToken,
      body: { schemas: [SCHEMA.group], displayName: `Group ${fixtures.marker}`, members: [{ value: provisioned.id }] },
    }),
    'SCIM group',
  );
  const legal = await ok(200, api.call('GET', '/v1/legal/documents', { key: a.keys.live }), 'legal documents');

  // A's credentials of every other kind, revoked: a publishable key, a vault member, a SCIM and an MCP token.
  const live = a.keys.live;
  const intakeId = fixtures.ids['/v1/intakes id'];
  const coffreId = fixtures.ids['/v1/coffres id'];
  const revokedCip = await ok(
    201,
    api.call('POST', `/v1/intakes/${intakeId}/publishable-keys`, { key: live, body: { label: 'revoked' } }),
    'publishable key',
  );
  await ok(
    200,
    api.call('DELETE', `/v1/intakes/${intakeId}/publishable-keys/${revokedCip.id}`, { key: live }),
    'revoke',
  );
  const revokedMember = await ok(
    201,
    api.call('POST', `/v1/coffres/${coffreId}/members`, {
      key: live,
      body: { email: uniqueAddress('revoked'), access: 'download' },
    }),
    'member',
  );
  await ok(200, api.call('DELETE', `/v1/coffres/${coffreId}/members/${revokedMember.id}`, { key: live }), 'revoke');
  const revokedScim = await ok(
    201,
    api.call('POST', '/v1/scim/tokens', { key: live, body: { name: 'revoked', mfa_code: await a.nextMfa() } }),
    'SCIM token',
  );
  await ok(200, api.call('DELETE', `/v1/scim/tokens/${revokedScim.id}`, { key: live }), 'revoke');
  const revokedMcp = await ok(
    201,
    api.call('POST', '/v1/mcp/tokens', { key: live, body: { name: 'revoked', scopes: ['transfers:read'] } }),
    'MCP token',
  );
  await ok(200, api.call('DELETE', `/v1/mcp/tokens/${revokedMcp.id}`, { key: live }), 'revoke');

  // A member provisioned through SCIM, with a key and an MCP token of their own, then deactivated.
  const leaver = await ok(
    201,
    api.call('POST', '/v1/scim/Users', { key: scimToken, body: scimUser(uniqueAddress('leaver')) }),
    'SCIM user',
  );
  const leaverKey = await issueApiKey(
    api.services,
    { workspaceId: a.workspace_id, userId: leaver.id, environment: 'live' },
    { name: 'leaver', key_type: 'restricted', scopes: ['transfers:read', 'mcp:manage'] },
  );
  const leaverMcp = await ok(
    201,
    api.call('POST', '/v1/mcp/tokens', { key: leaverKey.key, body: { name: 'leaver', scopes: ['transfers:read'] } }),
    "leaver's MCP token",
  );
  await ok(
    200,
    api.call('PATCH', `/v1/scim/Users/${leaver.id}`, {
      key: scimToken,
      body: { schemas: [SCHEMA.patch], Operations: [{ op: 'replace', path: 'active', value: false }] },
    }),
    'deactivation',
  );

  // B's own: an intake's publishable key, a SCIM token, an MCP token.
  const bIntake = await ok(
    201,
    api.call('POST', '/v1/intakes', { key: b.keys.live, body: { title: 'B' } }),
    'B intake',
  );
  const bScim = await ok(
    201,
    api.call('POST', '/v1/scim/tokens', { key: b.keys.live, body: { name: 'B', mfa_code: await b.nextMfa() } }),
    'B SCIM token',
  );
  const bMcp = await ok(
    201,
    api.call('POST', '/v1/mcp/tokens', { key: b.keys.live, body: { name: 'B', scopes: ['transfers:read'] } }),
    'B MCP token',
  );
  const me = await ok(200, api.call('GET', '/v1/me', { key: a.keys.live }), 'me');

  // A's live keys that authentication refuses, and two restricted keys: each route gets the one lacking its scope.
  const revoked = await a.mintKey({ name: `Revoked ${fixtures.marker}` });
  await ok(200, api.call('DELETE', `/v1/api-keys/${revoked.id}`, { key: a.keys.live }), 'revoke');
  const expired = await a.mintKey({ name: `Expired ${fixtures.marker}`, expires_in_days: 1 / 86_400 });
  const elsewhere = await a.mintKey({ name: `Office ${fixtures.marker}`, allowed_ips: ['203.0.113.0/24'] });
  const inactive = await a.mintKey({ name: `Inactive ${fixtures.marker}` });
  await ok(
    200,
    api.call('PATCH', `/v1/api-keys/${inactive.id}`, { key: a.keys.live, body: { is_active: false } }),
    'deactivate',
  );
  const capped = await a.mintKey({ name: `Capped ${fixtures.marker}`, max_uses: 1 });
  await ok(200, api.call('GET', '/v1/me', { key: capped.key }), 'the one use');
  // Restricted to a scope that is not sensitive: rotating it needs no verification code.
  const rotated = await a.mintKey({
    name: `Rotated ${fixtures.marker}`,
    key_type: 'restricted',
    scopes: ['transfers:read'],
  });
  await ok(
    200,
    api.call('POST', `/v1/api-keys/${rotated.id}/rotate`, { key: a.keys.live, body: { grace_period_hours: 0 } }),
    'rotate',
  );
  const readsTransfers = await a.mintKey({ name: 'reads', key_type: 'restricted', scopes: ['transfers:read'] });
  const readsWebhooks = await a.mintKey({ name: 'hooks', key_type: 'restricted', scopes: ['webhooks:read'] });
  const lacking = (route: RouteEntry) => {
    const scope = route.settings.plugins?.valise?.scope;
    return scope && holdsScope('restricted', ['transfers:read'], scope) ? readsWebhooks.key : readsTransfers.key;
  };
  const expiredMcp = await ok(
    201,
    api.call('POST', '/v1/mcp/tokens', {
      key: a.keys.live,
      body: { name: 'expired', scopes: ['transfers:read'], expires_in_days: 1 / 86_400 },
    }),
    'MCP token',
  );
  const lastExpiry = Math.max(new Date(expired.expires_at ?? 0).getTime(), new Date(expiredMcp.expires_at).getTime());
  const wait = lastExpiry - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 100));

  const { secrets } = fixtures;
  const fixed = (value: string | undefined) => () => {
    if (!value) throw new Error('a credential the fixtures did not make');
    return value;
  };
  const principals: Principal[] = [
    { kind: 'owner', label: "A's live key", credential: fixed(a.keys.live) },
    { kind: 'owner-in-query', label: "A's live key in the query string", credential: fixed(a.keys.live) },
    { kind: 'owner-as-basic', label: "A's live key as Basic credentials", credential: fixed(a.keys.live) },
    { kind: 'other-workspace', label: "B's live key", credential: fixed(b.keys.live) },
    { kind: 'test', label: "A's test key", credential: fixed(a.keys.test) },
    { kind: 'sandbox', label: "A's sandbox key", credential: fixed(a.keys.sandbox) },
    { kind: 'restricted', label: "A's restricted key lacking the scope", credential: lacking },
    { kind: 'revoked', label: "A's revoked key", credential: fixed(revoked.key) },
    { kind: 'inactive', label: "A's deactivated key", credential: fixed(inactive.key) },
    { kind: 'expired', label: "A's expired key", credential: fixed(expired.key) },
    { kind: 'rotated', label: "A's rotated-out key value", credential: fixed(rotated.key) },
    { kind: 'ip', label: "A's key from an address outside allowed_ips", credential: fixed(elsewhere.key) },
    { kind: 'capped', label: "A's key past its usage cap", credential: fixed(capped.key) },
    { kind: 'leaver', label: "A's deactivated member's key", credential: fixed(leaverKey.key) },
    { kind: 'publishable', label: "A's intake's cip_ key", credential: fixed(secrets['publishable key']) },
    { kind: 'revoked-publishable', label: "A's revoked cip_ key", credential: fixed(revokedCip.key) },
    { kind: 'other-publishable', label: "B's intake's cip_ key", credential: fixed(bIntake.publishable_key.key) },
    { kind: 'member', label: "A's vault member's invitation", credential: fixed(secrets['invitation token']) },
    {
      kind: 'revoked-member',
      label: "A's revoked member's invitation",
      credential: fixed(invitationToken(revokedMember)),
    },
    { kind: 'recipient', label: "A's recipient's personal link", credential: fixed(secrets['personal link code']) },
    { kind: 'scim', label: "A's SCIM token", credential: fixed(scimToken) },
    { kind: 'revoked-scim', label: "A's revoked SCIM token", credential: fixed(revokedScim.token) },
    { kind: 'other-scim', label: "B's SCIM token", credential: fixed(bScim.token) },
    { kind: 'mcp', label: "A's MCP token", credential: fixed(secrets['MCP token']) },
    { kind: 'revoked-mcp', label: "A's revoked MCP token", credential: fixed(revokedMcp.token) },
    { kind: 'expired-mcp', label: "A's expired MCP token", credential: fixed(expiredMcp.token) },
    { kind: 'leaver-mcp', label: "A's deactivated member's MCP token", credential: fixed(leaverMcp.token) },
    { kind: 'other-mcp', label: "B's MCP token", credential: fixed(bMcp.token) },
  ];

  const [document] = legal.data as Array<{ slug: string; version: string }>;
  const ids: Fixtures = {
    ...fixtures.ids,
    '/v1/scim/Users id': provisioned.id,
    '/v1/scim/Groups id': scimGroup.id,
    '/v1/scim/ResourceTypes id': 'User',
    '/v1/scim/Schemas id': SCHEMA.user,
    '/v1/mcp workspaceId': a.workspace_id,
    '/v1/coffre-access itemId': fixtures.ids['/v1/coffres itemId'] ?? '',
    [`${prefixOf('/i/{id}')} id`]: fixtures.ids['/v1/intakes id'] ?? '',
    '/v1/legal slug': document?.slug ?? '',
    legalVersion: document?.version ?? '',
    scimUserName,
  };
  // A's own creations under the Idempotency-Keys every cell reuses: what a replay to another would show.
  const stored: string[] = [];
  const replayable: string[] = [];
  for (const [name, call] of Object.entries(TENANT_CALLS)) {
    const [method = '', path = ''] = name.split(' ');
    if (method !== 'POST' || !call.body) continue;
    const created = await api.call(method, path, {
      key: a.keys.live,
      body: await call.body(ids, 'owner'),
      headers: { 'idempotency-key': idempotencyKey(name) },
    });
    if (created.status >= 300) continue;
    replayable.push(name);
    stored.push(...identifiersIn(created.body));
  }

  const billing = new Set(fixtures.billing);
  return {
    fixtures,
    ids,
    principals,
    replayable,
    forbidden: {
      workspace: [a.workspace_id, a.user_id, 'Authorization matrix A', me.user.email, ...fixtures.billing],
      live: [
        ...fixtures.owned.filter((id) => !billing.has(id)),
        fixtures.marker,
        ...fixtures.emails,
        provisioned.id,
        scimGroup.id,
        scimUserName,
        ...stored,
      ],
      credentials: [
        a.keys.live,
        a.keys.test,
        a.keys.sandbox,
        ...Object.values(secrets),
        revoked.key,
        expired.key,
        elsewhere.key,
        readsTransfers.key,
        readsWebhooks.key,
        revokedCip.key,
        invitationToken(revokedMember),
        revokedScim.token,
        revokedMcp.token,
        expiredMcp.token,
        leaverKey.key,
        leaverMcp.token,
        inactive.key,
        capped.key,
        rotated.key,
      ],
    },
  };
}

/** The ids and once-shown values of an answer (`id`, `key`, `token`, `secret`), at any depth. */
function identifiersIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(identifiersIn);
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, child]) =>
    typeof child === 'string' && ['id', 'key', 'token', 'secret'].includes(name) ? [child] : identifiersIn(child),
  );
}

const invitationToken = (member: { invitation_url: string }) =>
  new URL(member.invitation_url).pathname.split('/').at(-1) ?? '';

/** A value of the same shape (length, letters, digits, punctuation) that no one issued. */
function forged(value: string): string {
  const pick = (set: string) => set.charAt(Math.floor(Math.random() * set.length));
  return value
    .replace(/[a-z]/g, () => pick('abcdefghijklmnopqrstuvwxyz'))
    .replace(/[A-Z0-9]/g, (c) => (/\d/.test(c) ? pick('0123456789') : pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ')));
}

type Sent = {
  method: string;
  path: string;
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
};

/** The request of a cell: A's ids in the path, a capability parameter of a public route holding `capability`. */
async function requestOf(
  route: RouteEntry,
  ids: Fixtures,
  principal: PrincipalKind,
  capability: string,
): Promise<Sent> {
  const name = routeName(route);
  const publicRoute = kindOf(route) === 'public';
  const path =
    FILE_PATHS[name] ??
    route.path.replace(/\{(\w+)\*?\}/g, (_, param: string) => {
      if (publicRoute && CAPABILITY_PARAMS.has(param)) return encodeURIComponent(capability);
      const value = ids[`${prefixOf(route.path)} ${param}`];
      if (value === undefined) throw new Error(`${name}: no fixture for {${param}}`);
      return value;
    });
  const tenantBody = TENANT_CALLS[name]?.body;
  const body = tenantBody
    ? await tenantBody(ids, principal)
    : ((BODIES[name] ?? MORE_BODIES[name])?.(ids) ?? (validatesPayload(route) ? {} : undefined));
  const rawBody = RAW_BODIES[name]?.(ids);
  const idempotency: Record<string, string> =
    route.method === 'get' || route.method === 'options' ? {} : { 'idempotency-key': idempotencyKey(name) };
  return {
    method: route.method.toUpperCase(),
    path,
    ...(rawBody !== undefined ? { rawBody } : body !== undefined ? { body } : {}),
    headers: { ...HEADERS[name], ...idempotency },
  };
}

/** The request with the credential where the principal puts it: the Authorization header, unless told otherwise. */
function presented(principal: PrincipalKind, sent: Sent, credential: string): Sent {
  if (principal === 'owner-in-query') {
    return {
      ...sent,
      path: `${sent.path}${sent.path.includes('?') ? '&' : '?'}api_key=${encodeURIComponent(credential)}`,
    };
  }
  if (principal === 'owner-as-basic') {
    const basic = `Basic ${Buffer.from(`${credential}:`).toString('base64')}`;
    return { ...sent, headers: { ...sent.headers, authorization: basic } };
  }
  return { ...sent, key: credential };
}

const send = (sent: Sent) => api.call(sent.method, sent.path, sent);

/** What is wrong with an answer, or null. */
function verdict(expected: Expected, response: ApiResponse, control: ApiResponse | null): string | null {
  const { status } = response;
  if (status >= 500) return `${status}`;
  const code = response.body?.error?.code ?? null;
  if ('refused' in expected) {
    if (status !== expected.refused) return `${status}, not ${expected.refused}`;
    if (expected.code === null) {
      // RFC 7644's error body (docs/scim.md, "Answers and errors").
      const scim = response.body?.schemas?.includes(SCHEMA.error) && response.body?.status === String(status);
      return scim ? null : 'not a SCIM error body';
    }
    if (code !== expected.code) return `${code}, not ${expected.code}`;
    if (code === 'rate_limited' && !response.headers.get('retry-after')) return 'a 429 without Retry-After';
    const envelope = response.body.error as Record<string, unknown>;
    const incomplete = ['message', 'param', 'doc_url', 'request_id'].filter((field) => !(field in envelope));
    if (incomplete.length > 0) return `an envelope without ${incomplete.join(', ')}`;
    if (expected.requiredScope && response.body.error.required_scope !== expected.requiredScope)
      return `required_scope ${response.body.error.required_scope}, not ${expected.requiredScope}`;
    return null;
  }
  if ('accepted' in expected) {
    const accepted = expected.accepted === '2xx' ? status >= 200 && status < 300 : status === expected.accepted;
    return accepted ? null : `${status}, not accepted (${expected.accepted})`;
  }
  if (!control) return 'no control answer';
  const controlCode = control.body?.error?.code ?? null;
  return status === control.status && code === controlCode
    ? null
    : `${status} ${code}, where a forged value gets ${control.status} ${controlCode}`;
}

/** An answer as a reader sees it: its headers (a `Location`, a `Link`) and its body. */
const answered = (response: ApiResponse) =>
  `${[...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')}\n${response.text}`;

/** A's strings the answer shows that the request did not carry (nor, on a public route, the anonymous answer). */
function leaks(
  world: World,
  principal: PrincipalKind,
  expected: Expected,
  sent: Sent,
  response: ApiResponse,
  control: ApiResponse | null,
) {
  const { workspace, live, credentials } = world.forbidden;
  const ownEnvironmentOnly = principal === 'test' || principal === 'sandbox';
  // A credential accepted on its own route shows what it opens (a share, a vault, A's SCIM users):
  // never another credential.
  const opened = 'accepted' in expected && !WORKSPACE_B.has(principal);
  const searched = ownEnvironmentOnly
    ? [...live, ...credentials]
    : opened
      ? credentials
      : [...workspace, ...live, ...credentials];
  const asked = `${sent.path} ${sent.key ?? ''} ${JSON.stringify(sent.body ?? '')} ${sent.rawBody ?? ''}`;
  const shown = answered(response);
  const shownAnyway = control ? answered(control) : '';
  return searched.filter(
    (value) => value.length >= 6 && shown.includes(value) && !asked.includes(value) && !shownAnyway.includes(value),
  );
}

const METHOD_ORDER = ['get', 'options', 'post', 'put', 'patch', 'delete'];

/** The arguments naming A's resources, by tool: the tools' own door to the ids the routes guard. */
const TOOL_ARGUMENTS: Record<McpToolName, (ids: Fixtures) => Record<string, unknown>> = {
  list_transfers: () => ({}),
  create_transfer: () => ({ files: [{ name: 'x.bin', size: 10 }] }),
  get_transfer_status: (ids) => ({ transfer_id: ids['/v1/transfers id'] }),
  revoke_transfer: (ids) => ({ transfer_id: ids['/v1/transfers id'] }),
  list_intakes: () => ({}),
  list_intake_documents: (ids) => ({ intake_id: ids['/v1/intakes id'] }),
  list_vaults: () => ({}),
  list_vault_items: (ids) => ({ vault_id: ids['/v1/coffres id'] }),
  search_audit_log: () => ({}),
  analytics_summary: () => ({}),
};

// First: each caller's refused writes are in its own audit log with the ids it sent (api/extensions/audit.ts),
// which its later reads of the audit log would show. The tools write less, and read the log once.
test.serial(
  'every tool of the hosted MCP transport refuses what its token may not reach, and shows none of A\u2019s data',
  async (t) => {
    const w = await world();
    const allScopes = [...new Set(MCP_TOOLS.map((tool) => tool.requiredScope))];
    const issue = async (key: string, scopes: string[]) => {
      const created = await api.call('POST', '/v1/mcp/tokens', { key, body: { name: 'tools', scopes } });
      if (created.status !== 201) throw new Error(`MCP token: ${created.status} ${created.text}`);
      return created.body.token as string;
    };
    // Each token on its own workspace's transport (another's path is 403, the route matrix's cell).
    const callers: Array<{ kind: PrincipalKind; label: string; token: (scope: string) => string; workspace: string }> =
      [];
    for (const [kind, label, key, workspace] of [
      ['other-workspace', "B's MCP token", b.keys.live, b.workspace_id],
      ['test', "A's test MCP token", a.keys.test, a.workspace_id],
      ['sandbox', "A's sandbox MCP token", a.keys.sandbox, a.workspace_id],
    ] as const) {
      const token = await issue(key, allScopes);
      callers.push({ kind, label, token: () => token, workspace });
    }
    const readsTransfers = await issue(a.keys.live, ['transfers:read']);
    const readsVaults = await issue(a.keys.live, ['coffres:read']);
    callers.push({
      kind: 'restricted',
      label: "A's MCP token lacking the tool's scope",
      token: (scope) => (scope === 'transfers:read' ? readsVaults : readsTransfers),
      workspace: a.workspace_id,
    });

    const wrong: string[] = [];
    const leaked: string[] = [];
    for (const tool of MCP_TOOLS) {
      const args = TOOL_ARGUMENTS[tool.name](w.ids);
      const namesA = Object.keys(args).some((name) => name.endsWith('_id'));
      for (const caller of callers) {
        const token = caller.token(tool.requiredScope);
        const response = await api.call('POST', `/v1/mcp/hosted/${caller.workspace}/transport`, {
          key: token,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: args } },
        });
        const result = response.body?.result as { isError?: boolean; content?: Array<{ text: string }> } | undefined;
        const text = result?.content?.[0]?.text ?? '';
        const refusal = result?.isError ? (JSON.parse(text) as { error: Record<string, unknown> }).error : null;
        // The route's own answers (docs/mcp.md, "Tools"): the scope first, then the id's reach (as
        // outOfReach has it: a sandbox token is told a live intake's documents are forbidden).
        const expected =
          caller.kind === 'restricted'
            ? 'scope_missing'
            : !namesA
              ? null
              : caller.kind === 'sandbox' && tool.name === 'list_intake_documents'
                ? 'forbidden'
                : 'not_found';
        const got = refusal?.code ?? null;
        if (!result) wrong.push(`${tool.name} with ${caller.label}: no tool result: ${response.text.slice(0, 160)}`);
        else if (response.status !== 200 || got !== expected)
          wrong.push(
            `${tool.name} with ${caller.label}: ${response.status} ${got}, not ${expected}: ${text.slice(0, 160)}`,
          );
        if (expected === 'scope_missing' && refusal?.required_scope !== tool.requiredScope)
          wrong.push(`${tool.name} with ${caller.label}: required_scope ${refusal?.required_scope}`);
        const sent: Sent = { method: 'POST', path: '', key: token, body: args };
        const refused: Expected = expected ? { refused: 200, code: expected } : { accepted: 200 };
        const shown = leaks(w, caller.kind, refused, sent, response, null);
        if (shown.length > 0) leaked.push(`${tool.name} with ${caller.label} shows ${shown.join(', ')}`);
      }
    }
    t.deepEqual(wrong, [], 'tool calls answered otherwise than the routes they are');
    t.deepEqual(leaked, [], "tool results showing A's data");
    report.tools = {
      size: `${MCP_TOOLS.length} tools × ${callers.length} tokens = ${MCP_TOOLS.length * callers.length} cells`,
      tokens: callers.map((caller) => caller.label),
    };
    t.log(report.tools.size);
  },
);

test.serial('every route refuses every credential that is not its own, and shows none of A\u2019s data', async (t) => {
  const started = Date.now();
  const w = await world();
  const table = api.server
    .table()
    .slice()
    .sort((x, y) => METHOD_ORDER.indexOf(x.method) - METHOD_ORDER.indexOf(y.method));
  const unknownMethods = table.filter((route) => !METHOD_ORDER.includes(route.method)).map(routeName);
  t.deepEqual(unknownMethods, [], 'a method the matrix does not order');

  // Not vacuous: A's own live key is shown each kind of string the matrix looks for in other answers.
  const shownToA = async (path: string, values: string[]) => {
    const { text } = await api.call('GET', fill(path, w.ids), { key: a.keys.live });
    return values.filter((value) => text.includes(value));
  };
  t.not((await shownToA('/v1/me', w.forbidden.workspace)).length, 0, "A's identity, to A");
  t.true((await shownToA('/v1/transfers/{id}', w.forbidden.live)).length >= 2, "A's transfer, to A");
  t.not((await shownToA('/v1/intakes/{id}/publishable-keys', w.forbidden.credentials)).length, 0, "A's cip_ key, to A");
  t.true(w.replayable.length >= 10, `A's writes under the cells' Idempotency-Keys: ${w.replayable.join(', ')}`);

  const wrong: string[] = [];
  const leaked: string[] = [];
  const counts = { cells: 0, checked: 0, accepted: 0, refused: 0, asForged: 0 };
  const byKind: Record<string, number> = {};
  /** Each route's row: what each principal got. */
  const rows: Record<string, Record<string, string>> = {};
  const exemptions = new Set<string>();
  for (const route of table) {
    const name = routeName(route);
    byKind[kindOf(route)] = (byKind[kindOf(route)] ?? 0) + 1;
    // Every cell of a route at once: they touch nothing another of them reads.
    await Promise.all(
      w.principals.map(async (principal) => {
        counts.cells += 1;
        const credential = principal.credential(route);
        const expected = expectation(route, principal.kind, credential);
        rows[name] ??= {};
        if ('exempt' in expected) {
          rows[name][principal.kind] = 'exempt';
          exemptions.add(expected.exempt);
          return;
        }
        const sent = presented(principal.kind, await requestOf(route, w.ids, principal.kind, credential), credential);
        const control =
          'asForged' in expected ? await send(await requestOf(route, w.ids, principal.kind, forged(credential))) : null;
        const response = await send(sent);
        counts.checked += 1;
        counts['accepted' in expected ? 'accepted' : 'refused' in expected ? 'refused' : 'asForged'] += 1;
        rows[name][principal.kind] = `${response.status} ${response.body?.error?.code ?? ''}`.trim();
        const problem = verdict(expected, response, control);
        if (problem) wrong.push(`${name} with ${principal.label}: ${problem}: ${response.text.slice(0, 160)}`);
        const shown = leaks(w, principal.kind, expected, sent, response, control);
        if (shown.length > 0) leaked.push(`${name} with ${principal.label} shows ${shown.join(', ')}`);
      }),
    );
  }

  t.deepEqual(wrong, [], 'cells answered otherwise than documented');
  t.deepEqual(leaked, [], "answers showing A's data");
  t.deepEqual(openApi?.violations ?? [], [], 'answers /v1/openapi.json does not describe');
  const matrix = {
    routes: table.length,
    principals: w.principals.map((p) => p.label),
    size: `${table.length} routes × ${w.principals.length} principals = ${table.length * w.principals.length} cells`,
    cells_checked: counts.checked,
    cells_exempted: counts.cells - counts.checked,
    accepted: counts.accepted,
    refused: counts.refused,
    public_as_forged: counts.asForged,
    exemptions: [...exemptions],
    idempotency_keys_used_first_by_a: w.replayable.length,
    routes_by_authentication: byKind,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    rows,
  };
  t.log(`${matrix.size}: ${matrix.cells_checked} checked, ${matrix.cells_exempted} exempted`);
  t.log(JSON.stringify({ ...matrix, principals: undefined, rows: undefined }));
  report.routes = matrix;
});
