import test from 'ava';
import type Joi from 'joi';
import type { RouteSettings } from '../api/types.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
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

const expected = (route: RouteEntry, label: string) => outOfReach(route, label === "A's sandbox key");

/** The API-key routes: not public (`auth: false`), not the intake submitters' `publishable-key` strategy. */
function byApiKey(route: RouteEntry): boolean {
  const auth = route.settings.auth as unknown;
  if (auth === false) return false;
  const strategies = (auth as { strategies?: string[] } | undefined)?.strategies;
  return strategies === undefined || strategies.includes('api-key');
}

let made: Promise<WorkspaceFixtures> | undefined;
const fixtures = () => {
  made ??= makeFixtures(api, a, receiver);
  return made;
};

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
  const callers: Array<[string, string]> = [
    ["B's live key", b.keys.live],
    ["A's test key", a.keys.test],
    ["A's sandbox key", a.keys.sandbox],
  ];
  // Every wrong answer at once, not only the first: a new leak usually comes with its siblings.
  const wrong: string[] = [];
  for (const route of exercised) {
    const name = routeName(route);
    for (const [label, key] of callers) {
      const makeBody = BODIES[name];
      const body = makeBody ? makeBody(ids) : validatesPayload(route) ? {} : undefined;
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
