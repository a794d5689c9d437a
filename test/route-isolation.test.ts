import test from 'ava';
import type Joi from 'joi';
import Stripe from 'stripe';
import type { RouteSettings } from '../api/types.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import { content, createTransfer, put, waitForTransfer } from './helpers/transfers.ts';

// Isolation driven by the route table itself (issue #23): every route an API key reaches with path
// parameters is called with workspace A's ids by another workspace's key and by A's other environments'
// keys, and must answer 404 not_found (the spec: other workspaces' ids and other environments are
// invisible). A route added without a fixture for its parameters fails this file until one is given
// (or it is exempted below with a reason), so no route escapes the check by being new. The list
// routes are then held to never showing A's ids to the same keys.

let api: TestApi;
let a: TestWorkspace;
let b: TestWorkspace;
let receiver: Receiver;
test.before(async () => {
  api = await startApi();
  receiver = await startReceiver();
  a = await api.workspace('Route isolation A');
  b = await api.workspace('Route isolation B');
});
test.after.always(async () => {
  await receiver?.close();
  await api?.close();
});

type RouteEntry = ReturnType<TestApi['server']['table']>[number];
type Fixtures = Record<string, string>;

/** Routes with path parameters that no fixture can stand for, each with why. Keep it short. */
const EXEMPT: Record<string, string> = {
  'GET /v1/legal/documents/{slug}': 'a published legal document is the same for every workspace and environment',
};

/** List routes whose items belong to no tenant, each with why: checked for leaks, not for A's fixtures. */
const NOT_TENANT_LISTS: Record<string, string> = {
  '/v1/legal/documents': 'the published legal documents, the same for every key',
  '/v1/gdpr/acceptances': "one entry per published document, with no id of the tenant's",
};

/** Lists of what belongs to the workspace, not to one environment: A's other keys see them too, B never. */
const WORKSPACE_LISTS: Record<string, string> = {
  '/v1/billing/invoices': "billing is the workspace's (docs/billing.md)",
  '/v1/billing/processor-events': "billing is the workspace's (docs/billing.md)",
};

/**
 * Where the spec answers otherwise than 404, to whom, and why. A sandbox key asking for a live intake's
 * document is refused with 403 (spec, GET /v1/intakes/{id}/documents/{docId}; docs/intakes.md), which
 * lib/intakes/documents.ts applies to every document route. It tells only the same workspace's sandbox
 * key that a live intake exists, and nothing of it.
 */
function expected(route: RouteEntry, label: string): { status: number; code: string } {
  if (label === "A's sandbox key" && route.path.startsWith('/v1/intakes/{id}/documents'))
    return { status: 403, code: 'forbidden' };
  return { status: 404, code: 'not_found' };
}

/** The API-key routes: not public (`auth: false`), not the intake submitters' `publishable-key` strategy. */
function byApiKey(route: RouteEntry): boolean {
  const auth = route.settings.auth as unknown;
  if (auth === false) return false;
  const strategies = (auth as { strategies?: string[] } | undefined)?.strategies;
  return strategies === undefined || strategies.includes('api-key');
}

const paramsOf = (path: string) => [...path.matchAll(/\{(\w+)\*?\}/g)].map((m) => m[1] as string);
/** `/v1/coffres/{id}/items/{itemId}` → `/v1/coffres`: the family a parameter's name is read in. */
const prefixOf = (path: string) => path.split('/').slice(0, 3).join('/');
const routeName = (route: RouteEntry) => `${route.method.toUpperCase()} ${route.path}`;

/**
 * The smallest valid body of each route that validates one, so that validation passes and the answer is
 * the lookup's. A route that validates a body and is missing here gets `{}`, and fails below with a 400
 * if that is not enough: give it its body here.
 */
const BODIES: Record<string, (ids: Fixtures, caller: TestWorkspace) => Promise<unknown> | unknown> = {
  'PATCH /v1/api-keys/{id}': () => ({ name: 'hijack' }),
  // MFA-gated for sensitive keys: a current code of the calling key's own workspace.
  'POST /v1/api-keys/{id}/rotate': async (_, caller) => ({ grace_period_hours: 0, mfa_code: await caller.nextMfa() }),
  'PATCH /v1/coffres/{id}': () => ({ name: 'hijack' }),
  'POST /v1/coffres/{id}/items': () => ({ name: 'x.bin', size: 1 }),
  'POST /v1/coffres/{id}/members': () => ({ email: 'intruder@elsewhere.test', access: 'upload' }),
  'PATCH /v1/coffres/{id}/members/{memberId}': () => ({ access: 'upload' }),
  'PATCH /v1/collections/{id}': () => ({ title: 'hijack' }),
  'POST /v1/collections/{id}/transfers': (ids) => ({ transfer_ids: [ids['/v1/transfers id']] }),
  'PATCH /v1/intakes/{id}': () => ({ title: 'hijack' }),
  'PATCH /v1/recipients/{id}': () => ({ name: 'hijack' }),
  'PATCH /v1/rules/{id}': () => ({ is_enabled: false }),
  'PATCH /v1/transfers/{id}': () => ({ allowed_countries: ['GB'] }),
  'POST /v1/transfers/{id}/approve': () => ({ decision: 'approved' }),
  'PUT /v1/transfers/{id}/folder': (ids) => ({ folder_id: ids.folder }),
};

function validatesPayload(route: RouteEntry): boolean {
  const validate = route.settings.validate as { payload?: unknown } | undefined;
  return validate?.payload !== undefined && validate.payload !== null && validate.payload !== true;
}

let made: Promise<{ ids: Fixtures; owned: string[] }> | undefined;
const fixtures = () => {
  made ??= makeFixtures();
  return made;
};

/** Workspace A's resources, one of each kind, made through the API with A's live key. */
async function makeFixtures(): Promise<{ ids: Fixtures; owned: string[] }> {
  const key = a.keys.live;
  const ok = async (status: number, response: Promise<ApiResponse>, what: string) => {
    const got = await response;
    if (got.status !== status) throw new Error(`${what}: ${got.status} ${got.text}`);
    return got.body;
  };

  // A transfer, uploaded and active, with a recipient of its own.
  const recipient = await ok(
    201,
    api.call('POST', '/v1/recipients', { key, body: { email: uniqueAddress('isolated'), name: 'Isolated' } }),
    'recipient',
  );
  const data = content(1_000);
  const created = await createTransfer(api, key, {
    files: [{ name: 'mine.bin', size: data.length }],
    transfer_title: 'A only',
    recipients: [recipient.email],
  });
  for (const entry of created.upload_urls) {
    const stored = await put(entry.url, data);
    if (stored.status !== 200) throw new Error(`upload: ${stored.status}`);
  }
  const transfer = await waitForTransfer(api, key, created.transfer.id, (row) => row.status === 'active');
  const folder = await ok(201, api.call('POST', '/v1/folders', { key, body: { name: 'A folder' } }), 'folder');
  await ok(
    200,
    api.call('PUT', `/v1/transfers/${transfer.id}/folder`, { key, body: { folder_id: folder.id } }),
    'file into folder',
  );
  const collection = await ok(
    201,
    api.call('POST', '/v1/collections', { key, body: { title: 'A collection', transfer_ids: [transfer.id] } }),
    'collection',
  );

  // An intake (server mode) with one submitted, scanned document.
  const intake = await ok(201, api.call('POST', '/v1/intakes', { key, body: { title: 'A intake' } }), 'intake');
  const submitted = await ok(
    201,
    api.call('POST', `/v1/intakes/${intake.id}/submissions`, {
      key: intake.publishable_key.key,
      body: { files: [{ name: 'invoice.pdf', size: data.length }] },
    }),
    'submission',
  );
  await put(submitted.upload_urls[0].url, data);
  await eventually(async () => {
    const doc = await api.call('GET', `/v1/intakes/${intake.id}/documents/${submitted.document.id}`, { key });
    return doc.body?.status === 'available' ? true : undefined;
  }, 60_000);

  // A vault with a member and an item.
  const coffre = await ok(201, api.call('POST', '/v1/coffres', { key, body: { name: 'A room' } }), 'vault');
  const member = await ok(
    201,
    api.call('POST', `/v1/coffres/${coffre.id}/members`, { key, body: { email: 'insider@a.test', access: 'view' } }),
    'member',
  );
  const item = await ok(
    201,
    api.call('POST', `/v1/coffres/${coffre.id}/items`, { key, body: { name: 'plan.pdf', size: 1 } }),
    'item',
  );

  // A webhook with one delivery (its test ping), a rule, an API key.
  const webhook = await ok(
    201,
    api.call('POST', '/v1/webhooks', { key, body: { url: receiver.url('/a'), events: ['transfer.created'] } }),
    'webhook',
  );
  const ping = await ok(200, api.call('POST', `/v1/webhooks/${webhook.id}/test`, { key }), 'ping');
  const rule = await ok(
    201,
    api.call('POST', '/v1/rules', {
      key,
      body: { name: 'A rule', trigger_event: 'transfer.created', action_type: 'archive_transfer' },
    }),
    'rule',
  );
  const apiKey = await ok(
    201,
    api.call('POST', '/v1/api-keys', {
      key,
      body: { name: 'A key', key_type: 'restricted', scopes: ['transfers:read'] },
    }),
    'api key',
  );
  const scimToken = await ok(
    201,
    api.call('POST', '/v1/scim/tokens', { key, body: { name: 'A IdP', mfa_code: await a.nextMfa() } }),
    'SCIM token',
  );
  const mcpToken = await ok(
    201,
    api.call('POST', '/v1/mcp/tokens', { key, body: { name: 'A agent', scopes: ['transfers:read'] } }),
    'MCP token',
  );
  // One SCIM operation, so that A's SCIM audit names A's token.
  await ok(200, api.call('GET', '/v1/scim/Users', { key: scimToken.token }), 'SCIM list');

  // An invoice, from the payment processor's signed event about A's customer (docs/billing.md).
  const [billingSecret = ''] = api.services.config.billing.webhookSecrets;
  const invoiceId = `in_isolated${Date.now()}`;
  const processorEventId = `evt_isolated${Date.now()}`;
  const payload = JSON.stringify({
    id: processorEventId,
    type: 'invoice.finalized',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: invoiceId,
        customer: `cus_isolated${Date.now()}`,
        status: 'open',
        amount_due: 100,
        amount_paid: 0,
        currency: 'eur',
        created: Math.floor(Date.now() / 1000),
        metadata: { workspace_id: a.workspace_id },
      },
    },
  });
  const signature = new Stripe('sk_test_valise').webhooks.generateTestHeaderString({ payload, secret: billingSecret });
  await ok(
    200,
    api.call('POST', '/v1/billing/processor/stripe', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    }),
    'processor event',
  );

  // A GDPR export, completed: its answer then stays the same (but for its fresh link).
  const gdprExport = await ok(202, api.call('POST', '/v1/gdpr/exports', { key, body: {} }), 'GDPR export');
  await eventually(async () => {
    const found = await api.call('GET', `/v1/gdpr/exports/${gdprExport.id}`, { key });
    return found.body?.status === 'completed' ? true : undefined;
  }, 60_000);

  // By (path prefix, parameter name): `{id}` is a vault under /v1/coffres and a rule under /v1/rules.
  const ids: Fixtures = {
    '/v1/api-keys id': apiKey.id,
    '/v1/coffres id': coffre.id,
    '/v1/coffres itemId': item.item.id,
    '/v1/coffres memberId': member.id,
    '/v1/collections id': collection.id,
    '/v1/collections transferId': transfer.id,
    '/v1/gdpr id': gdprExport.id,
    '/v1/intakes id': intake.id,
    '/v1/intakes docId': submitted.document.id,
    '/v1/intakes keyId': intake.publishable_key.id,
    '/v1/mcp id': mcpToken.id,
    '/v1/recipients id': recipient.id,
    '/v1/rules id': rule.id,
    '/v1/scim id': scimToken.id,
    '/v1/transfers id': transfer.id,
    '/v1/webhooks id': webhook.id,
    '/v1/webhooks deliveryId': ping.delivery_id,
    // Not a path parameter: the folder a PUT .../folder body names.
    folder: folder.id,
  };
  const owned = [
    ...new Set([
      ...Object.values(ids),
      ...transfer.files.map((f: { id: string }) => f.id),
      ping.event_id,
      invoiceId,
      processorEventId,
    ]),
  ];
  return { ids, owned };
}

/** What A's live key reads of each resource: compared before and after, it shows nothing was changed. */
async function snapshot(routes: RouteEntry[], ids: Fixtures) {
  const seen: Record<string, unknown> = {};
  for (const route of routes) {
    const valise: RouteSettings = route.settings.plugins?.valise ?? {};
    if (route.method !== 'get' || valise.openapi?.binary) continue;
    const path = fill(route.path, ids);
    const response = await api.call('GET', path, { key: a.keys.live });
    seen[path] = { status: response.status, body: stable(response.body) };
  }
  // The folder and the webhook have no route of their own to read them by: their lists.
  for (const path of ['/v1/folders', '/v1/webhooks']) {
    const response = await api.call('GET', path, { key: a.keys.live });
    seen[path] = { status: response.status, body: stable(response.body) };
  }
  return seen as Record<string, { status: number; body: unknown }>;
}

/** Without what is minted per read (signed download links) and what reading itself moves. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([name]) => !/(_url|_urls|^last_used_at|^download_expires_at)$/.test(name))
        .map(([name, child]) => [name, stable(child)]),
    );
  }
  return value;
}

const fill = (path: string, ids: Fixtures) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => ids[`${prefixOf(path)} ${name}`] ?? `{${name}}`);

// First: the route loop below leaves B's own failed attempts, A's ids included (the ids B sent), in B's
// audit log, which records every mutating request, refused or not (api/extensions/audit.ts).
test.serial("no list route shows A's ids to another workspace or environment", async (t) => {
  const table = api.server.table().filter(byApiKey);
  const { owned } = await fixtures();
  const lists = table.filter((route) => route.method === 'get' && paramsOf(route.path).length === 0);
  let checked = 0;
  const unseen: string[] = [];
  for (const route of lists) {
    const query = (route.settings.validate as { query?: Joi.Schema } | undefined)?.query;
    const keys = (query?.describe() as { keys?: Record<string, unknown> } | undefined)?.keys ?? {};
    const path = 'limit' in keys ? `${route.path}?limit=100` : route.path;
    const own = await api.call('GET', path, { key: a.keys.live });
    if (!Array.isArray(own.body?.data)) continue;
    checked += 1;
    if (!owned.some((id) => own.text.includes(id)) && !(route.path in NOT_TENANT_LISTS)) unseen.push(path);
    for (const [label, key] of [
      ["B's live key", b.keys.live],
      ["A's test key", a.keys.test],
      ["A's sandbox key", a.keys.sandbox],
    ] as const) {
      const response = await api.call('GET', path, { key });
      t.is(response.status, 200, `${path} with ${label}: ${response.text.slice(0, 300)}`);
      if (route.path in WORKSPACE_LISTS && key !== b.keys.live) continue;
      const shown = owned.filter((id) => response.text.includes(id));
      t.deepEqual(shown, [], `${path} with ${label} shows A's ids`);
    }
  }
  t.log(`${checked} list routes checked`);
  // Not vacuous: each list shows some of A's ids to A's own live key. A new list route of a resource
  // makeFixtures does not create fails here until it does.
  t.deepEqual(unseen, [], "lists in which A's live key sees none of A's fixtures");
});

test.serial('every API-key route with path parameters answers 404 to other workspaces and environments', async (t) => {
  const table = api.server.table().filter(byApiKey);
  const withParams = table.filter((route) => paramsOf(route.path).length > 0);
  const { ids } = await fixtures();

  const missing = withParams
    .filter((route) => !(routeName(route) in EXEMPT))
    .flatMap((route) =>
      paramsOf(route.path)
        .filter((name) => ids[`${prefixOf(route.path)} ${name}`] === undefined)
        .map((name) => `${routeName(route)}: no fixture for {${name}}`),
    );
  t.deepEqual(missing, [], 'give each parameter a fixture in makeFixtures, or exempt the route with a reason');

  const exercised = withParams.filter((route) => !(routeName(route) in EXEMPT));
  const before = await snapshot(exercised, ids);
  const callers: Array<[string, string, TestWorkspace]> = [
    ["B's live key", b.keys.live, b],
    ["A's test key", a.keys.test, a],
    ["A's sandbox key", a.keys.sandbox, a],
  ];
  // Every wrong answer at once, not only the first: a new leak usually comes with its siblings.
  const wrong: string[] = [];
  for (const route of exercised) {
    const name = routeName(route);
    for (const [label, key, caller] of callers) {
      const makeBody = BODIES[name];
      const body = makeBody ? await makeBody(ids, caller) : validatesPayload(route) ? {} : undefined;
      const response = await api.call(route.method.toUpperCase(), fill(route.path, ids), {
        key,
        ...(body === undefined ? {} : { body }),
      });
      const answer = expected(route, label);
      if (response.status !== answer.status || response.body?.error?.code !== answer.code)
        wrong.push(`${name} with ${label}: ${response.status} ${response.text.slice(0, 200)}`);
    }
  }

  t.deepEqual(wrong, [], 'other workspaces and environments must get 404 not_found');

  // Still there, unchanged, for A's live key.
  const after = await snapshot(exercised, ids);
  for (const [path, seen] of Object.entries(after)) t.deepEqual(seen, before[path], `A's ${path} changed`);
  const unreadable = Object.entries(after).filter(([, seen]) => seen.status !== 200);
  t.deepEqual(unreadable, [], "A's own live key still reads all of A's resources");
  t.log(
    `${exercised.length} routes exercised (× ${callers.length} keys), ${withParams.length - exercised.length} exempted`,
  );
});
