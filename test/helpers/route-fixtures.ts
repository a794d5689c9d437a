import Stripe from 'stripe';
import { type ApiResponse, eventually, type TestApi, type TestWorkspace } from './api.ts';
import { uniqueAddress } from './mail.ts';
import type { Receiver } from './receiver.ts';
import { content, createTransfer, put, waitForTransfer } from './transfers.ts';

// What the tests driven by the route table share (test/route-isolation.test.ts,
// test/authorization-matrix.test.ts): one resource of each kind in a workspace, made through the API,
// the ids that fill each route's path parameters, and the smallest valid body of each route.

export type RouteEntry = ReturnType<TestApi['server']['table']>[number];
/** By `<path prefix> <parameter name>` (see prefixOf), plus a few named values bodies need. */
export type Fixtures = Record<string, string>;

export const paramsOf = (path: string) => [...path.matchAll(/\{(\w+)\*?\}/g)].map((m) => m[1] as string);

/**
 * `/v1/coffres/{id}/items/{itemId}` → `/v1/coffres`: the family a parameter's name is read in. The SCIM
 * protocol's resources (`/v1/scim/Users/{id}`) are families of their own beside `/v1/scim/tokens/{id}`.
 */
export const prefixOf = (path: string) =>
  path
    .split('/')
    .slice(0, /^\/v1\/scim\/[A-Z]/.test(path) ? 4 : 3)
    .join('/');

export const routeName = (route: RouteEntry) => `${route.method.toUpperCase()} ${route.path}`;

/** The path with each parameter replaced by its fixture (left as `{name}` when there is none). */
export const fill = (path: string, ids: Fixtures) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => ids[`${prefixOf(path)} ${name}`] ?? `{${name}}`);

/**
 * What a key of another workspace or environment gets for a route naming one of the workspace's ids:
 * 404 not_found (the spec: other workspaces' ids and other environments are invisible), but for one
 * case the spec answers otherwise. A sandbox key asking for a live intake's document is refused with 403
 * (spec, GET /v1/intakes/{id}/documents/{docId}; docs/intakes.md), which lib/intakes/documents.ts
 * applies to every document route. It tells only the same workspace's sandbox key that a live intake
 * exists, and nothing of it.
 */
export function outOfReach(route: RouteEntry, sandbox: boolean): { status: number; code: string } {
  if (sandbox && route.path.startsWith('/v1/intakes/{id}/documents')) return { status: 403, code: 'forbidden' };
  return { status: 404, code: 'not_found' };
}

export function validatesPayload(route: RouteEntry): boolean {
  const validate = route.settings.validate as { payload?: unknown } | undefined;
  return validate?.payload !== undefined && validate.payload !== null && validate.payload !== true;
}

/**
 * The smallest valid body of each route with path parameters that validates one, so that validation
 * passes and the answer is the lookup's. A route that validates a body and is missing here gets `{}`.
 */
export const BODIES: Record<string, (ids: Fixtures) => unknown> = {
  'PATCH /v1/api-keys/{id}': () => ({ name: 'hijack' }),
  // The key is looked up before any verification code is asked for (lib/api-keys/service.ts,
  // checkBeforeTransaction): a key out of reach is 404 whatever the code.
  'POST /v1/api-keys/{id}/rotate': () => ({ grace_period_hours: 0 }),
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

/** A workspace's resources, one of each kind, and what the API answered when each was made. */
export type WorkspaceFixtures = {
  ids: Fixtures;
  /** Every id of the workspace's live environment the fixtures made, `billing` included. */
  owned: string[];
  /** The ids of the workspace's billing (an invoice, a processor event): the workspace's, not one environment's. */
  billing: string[];
  /** In every name and title the fixtures gave: one search finds any of them in a body. */
  marker: string;
  /** Addresses the fixtures gave (recipients, vault members). */
  emails: string[];
  /** Bearer values and capabilities the fixtures received: keys, tokens, links, secrets, codes. */
  secrets: Record<string, string>;
};

/** Workspace `ws`'s resources, one of each kind, made through the API with its live key. */
export async function makeFixtures(api: TestApi, ws: TestWorkspace, receiver: Receiver): Promise<WorkspaceFixtures> {
  const key = ws.keys.live;
  const marker = `mk${Math.random().toString(36).slice(2, 10)}`;
  const named = (what: string) => `${what} ${marker}`;
  const ok = async (status: number, response: Promise<ApiResponse>, what: string) => {
    const got = await response;
    if (got.status !== status) throw new Error(`${what}: ${got.status} ${got.text}`);
    return got.body;
  };

  // A transfer, uploaded and active, with a recipient of its own (and so a personal link).
  const recipient = await ok(
    201,
    api.call('POST', '/v1/recipients', { key, body: { email: uniqueAddress('isolated'), name: named('Isolated') } }),
    'recipient',
  );
  const data = content(1_000);
  const created = await createTransfer(api, key, {
    files: [{ name: `${marker}.bin`, size: data.length }],
    transfer_title: named('A only'),
    recipients: [recipient.email],
  });
  for (const entry of created.upload_urls) {
    const stored = await put(entry.url, data);
    if (stored.status !== 200) throw new Error(`upload: ${stored.status}`);
  }
  const transfer = await waitForTransfer(api, key, created.transfer.id, (row) => row.status === 'active');
  const folder = await ok(201, api.call('POST', '/v1/folders', { key, body: { name: named('A folder') } }), 'folder');
  await ok(
    200,
    api.call('PUT', `/v1/transfers/${transfer.id}/folder`, { key, body: { folder_id: folder.id } }),
    'file into folder',
  );
  const collection = await ok(
    201,
    api.call('POST', '/v1/collections', { key, body: { title: named('A collection'), transfer_ids: [transfer.id] } }),
    'collection',
  );

  // An intake (server mode) with one submitted, scanned document.
  const intake = await ok(201, api.call('POST', '/v1/intakes', { key, body: { title: named('A intake') } }), 'intake');
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
  const coffre = await ok(201, api.call('POST', '/v1/coffres', { key, body: { name: named('A room') } }), 'vault');
  const memberEmail = uniqueAddress('insider');
  const member = await ok(
    201,
    api.call('POST', `/v1/coffres/${coffre.id}/members`, { key, body: { email: memberEmail, access: 'view' } }),
    'member',
  );
  const item = await ok(
    201,
    api.call('POST', `/v1/coffres/${coffre.id}/items`, { key, body: { name: `${marker}.pdf`, size: 1 } }),
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
      body: { name: named('A rule'), trigger_event: 'transfer.created', action_type: 'archive_transfer' },
    }),
    'rule',
  );
  const apiKey = await ok(
    201,
    api.call('POST', '/v1/api-keys', {
      key,
      body: { name: named('A key'), key_type: 'restricted', scopes: ['transfers:read'] },
    }),
    'api key',
  );
  const scimToken = await ok(
    201,
    api.call('POST', '/v1/scim/tokens', { key, body: { name: named('A IdP'), mfa_code: await ws.nextMfa() } }),
    'SCIM token',
  );
  const mcpToken = await ok(
    201,
    api.call('POST', '/v1/mcp/tokens', { key, body: { name: named('A agent'), scopes: ['transfers:read'] } }),
    'MCP token',
  );
  // One SCIM operation, so that the workspace's SCIM audit names its token.
  await ok(200, api.call('GET', '/v1/scim/Users', { key: scimToken.token }), 'SCIM list');

  // An invoice, from the payment processor's signed event about the workspace's customer (docs/billing.md).
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
        metadata: { workspace_id: ws.workspace_id },
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
  const lastSegment = (url: string) => new URL(url).pathname.split('/').at(-1) ?? '';
  const personal = transfer.recipients?.[0] as { share_url: string } | undefined;
  const secrets: Record<string, string> = {
    'restricted key': apiKey.key,
    'SCIM token': scimToken.token,
    'MCP token': mcpToken.token,
    'publishable key': intake.publishable_key.key,
    'webhook secret': webhook.secret,
    'invitation token': lastSegment(member.invitation_url),
    'share code': transfer.short_code,
    'collection share code': lastSegment(collection.share_url),
  };
  if (personal) secrets['personal link code'] = lastSegment(personal.share_url);
  return {
    ids,
    owned,
    billing: [invoiceId, processorEventId],
    marker,
    emails: [recipient.email, memberEmail],
    secrets,
  };
}
