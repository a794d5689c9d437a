import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { gzipSync } from 'node:zlib';
import Hapi from '@hapi/hapi';
import test from 'ava';
import Stripe from 'stripe';
import { z } from 'zod';
import { revokeRoute } from '../api/plugins/api-keys/revoke.ts';
import { eventCatalogRoute } from '../api/plugins/webhooks/events.ts';
import { hashKeyValue } from '../lib/api-keys/values.ts';
import { randomBase62 } from '../lib/crypto/secrets.ts';
import { createEncryptStream } from '../lib/crypto/segmented-aead.ts';
import { createEventQueries, type EventRow } from '../lib/db/queries/events.ts';
import { createScimQueries } from '../lib/db/queries/scim.ts';
import { sql } from '../lib/db/sql.ts';
import {
  EVENT_CATALOG,
  EVENT_ENVELOPE_SCHEMA,
  EVENT_FAMILIES,
  EVENT_TYPES,
  type EventDefinition,
  isEventType,
  type JsonSchema,
  RULE_TRIGGERS,
} from '../lib/events/catalog.ts';
import { renderEventDocs } from '../scripts/events-doc.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { kill, startWorker } from './helpers/processes.ts';
import { startReceiver } from './helpers/receiver.ts';
import { content, createTransfer, EICAR, links, put, waitForTransfer } from './helpers/transfers.ts';
import { alterStoredBytes } from './helpers/unverifiable.ts';

// The catalog's promise: its `data` schemas for emitted events describe what
// the code records, exactly. The static tests check the catalog's structure;
// the others drive the real API and worker through every emitted event and
// validate each recorded row against its schema, undeclared members included.

// ---- A validator for the JSON Schema subset the catalog uses. ----

type Validate = (value: unknown, strict?: boolean) => string[];

const KEYWORDS = new Set([
  '$schema',
  'title',
  'description',
  'type',
  'format',
  'pattern',
  'enum',
  'minimum',
  'items',
  'properties',
  'required',
]);
const TYPES = new Set(['object', 'string', 'integer', 'number', 'boolean', 'null', 'array']);
const FORMATS: Record<string, (value: string) => boolean> = {
  'date-time': (v) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  email: (v) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v),
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return value === null;
  }
}

/**
 * Compiles a schema: throws on anything outside the subset ($ref, oneOf, an
 * unknown type or format, `required` naming an undeclared member), so that
 * "it compiles" means every keyword in it is understood and checked. In strict
 * mode, members an object schema does not declare are errors.
 */
function compile(schema: JsonSchema, at = '$'): Validate {
  if (!isPlainObject(schema)) throw new Error(`${at}: a schema is an object`);
  for (const key of Object.keys(schema)) if (!KEYWORDS.has(key)) throw new Error(`${at}: unsupported keyword ${key}`);
  const types = typeof schema.type === 'string' ? [schema.type] : [...(schema.type ?? [])];
  if (types.length === 0 || !types.every((t) => TYPES.has(t))) throw new Error(`${at}: bad type ${schema.type}`);
  const format = schema.format === undefined ? undefined : FORMATS[schema.format];
  if (schema.format !== undefined && !format) throw new Error(`${at}: unknown format ${schema.format}`);
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u');
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0)) {
    throw new Error(`${at}: enum must be a non-empty array`);
  }
  const properties = Object.entries(schema.properties ?? {}).map(
    ([name, member]) => [name, compile(member, `${at}.${name}`)] as const,
  );
  for (const name of schema.required ?? []) {
    if (!schema.properties || !(name in schema.properties)) throw new Error(`${at}: required ${name} is not declared`);
  }
  if (types.includes('array') && !schema.items) throw new Error(`${at}: an array schema needs items`);
  const items = schema.items ? compile(schema.items, `${at}[]`) : undefined;

  return (value, strict = false) => {
    if (!types.some((t) => hasType(value, t))) return [`${at}: expected ${types.join(' or ')}, got ${show(value)}`];
    if (schema.enum && !schema.enum.includes(value as string | null)) {
      return [`${at}: ${show(value)} is not one of ${schema.enum.join(', ')}`];
    }
    const errors: string[] = [];
    if (typeof value === 'string') {
      if (format && !format(value)) errors.push(`${at}: ${show(value)} is not a ${schema.format}`);
      if (pattern && !pattern.test(value)) errors.push(`${at}: ${show(value)} does not match ${schema.pattern}`);
    }
    if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) {
      errors.push(`${at}: ${value} is below ${schema.minimum}`);
    }
    if (Array.isArray(value) && items) for (const item of value) errors.push(...items(item, strict));
    if (isPlainObject(value)) {
      for (const name of schema.required ?? []) if (!(name in value)) errors.push(`${at}: ${name} is missing`);
      for (const [name, check] of properties) if (name in value) errors.push(...check(value[name], strict));
      if (strict && schema.properties) {
        for (const name of Object.keys(value)) {
          if (!(name in schema.properties)) errors.push(`${at}: ${name} is not declared`);
        }
      }
    }
    return errors;
  };
}

const show = (value: unknown) => JSON.stringify(value)?.slice(0, 80) ?? String(value);

const validators = new Map(EVENT_CATALOG.map((entry) => [entry.type, compile(entry.data, entry.type)]));
const validateEnvelope = compile(EVENT_ENVELOPE_SCHEMA, 'envelope');

// ---- Static checks of the catalog. ----

// What the brief for the catalog asks for, type by type.
const REQUIRED_TYPES = [
  ...[
    'created',
    'e2e_created',
    'downloaded',
    'first_download',
    'expired',
    'deleted',
    'scanned',
    'scan_clean',
    'scan_infected',
    'password_failed',
    'geo_blocked',
    'limit_reached',
    'approved',
    'rejected',
    'approval_requested',
  ].map((t) => `transfer.${t}`),
  ...['created', 'accessed', 'item_uploaded'].map((t) => `coffre.${t}`),
  ...['created', 'updated', 'deleted', 'item_added'].map((t) => `collection.${t}`),
  ...['created', 'submitted', 'completed', 'expired', 'deleted', 'submission_received'].map((t) => `request.${t}`),
  'reply.received',
  'signature.completed',
  'identity.verified',
  ...['invited', 'joined', 'removed', 'role_changed'].map((t) => `member.${t}`),
  ...['created', 'updated', 'revoked', 'rotated', 'expired'].map((t) => `api_key.${t}`),
  ...['updated', 'plan_changed'].map((t) => `workspace.${t}`),
  ...['invoice_paid', 'payment_failed', 'subscription_updated'].map((t) => `billing.${t}`),
  ...['verified', 'failed'].map((t) => `domain.${t}`),
  ...['created', 'revoked'].map((t) => `session.${t}`),
  'ping',
];
/** Types Valise adds beyond the brief: what rule actions and webhook auto-disabling record. */
const VALISE_TYPES = [
  // An invoice changed at the processor other than by a payment (docs/billing.md).
  'billing.invoice_updated',
  'transfer.expiry_extended',
  'transfer.archived',
  'transfer.scan_too_large',
  // A file that could not be verified ended its transfer (docs/transfers.md, "A scan that fails for good").
  'transfer.scan_failed',
  'webhook.disabled',
  'collection.item_removed',
  // The address book and personal links (docs/recipients.md).
  'recipient.created',
  'recipient.updated',
  'recipient.deleted',
  'recipient.download_completed',
  // Legal acceptances and GDPR exports (docs/legal.md, docs/gdpr.md).
  'workspace.legal_accepted',
  'workspace.export_requested',
  'workspace.export_completed',
  // SCIM provisioning (docs/scim.md); its deletion is the spec's member.removed.
  'member.created',
  'member.updated',
  'member.deactivated',
  'member.reactivated',
  // MCP tokens (docs/mcp.md, "Tokens"), as api_key.* for keys.
  'mcp_token.created',
  'mcp_token.revoked',
];

/** The spec's supported `trigger_event` values (Endpoints, Automation rules), as it lists them. */
const SPEC_TRIGGERS = [
  ...['created', 'e2e_created', 'downloaded', 'first_download', 'expired', 'limit_reached', 'geo_blocked'],
  ...['password_failed', 'approved', 'rejected', 'approval_requested'],
].map((t) => `transfer.${t}`);
SPEC_TRIGGERS.push(
  ...['created', 'revoked', 'rotated', 'expired'].map((t) => `api_key.${t}`),
  ...['created', 'deleted', 'submission_received'].map((t) => `request.${t}`),
  'reply.received',
  'signature.completed',
  'identity.verified',
);

test('the catalog lists at least 43 unique types: exactly those the spec and rules name, and Valise its own', (t) => {
  t.true(EVENT_CATALOG.length >= 43, `${EVENT_CATALOG.length} types`);
  t.is(new Set(EVENT_TYPES).size, EVENT_TYPES.length, 'no type is listed twice');
  t.deepEqual(
    REQUIRED_TYPES.filter((type) => !isEventType(type)),
    [],
  );
  // Written out here, not derived from the catalog: adding or dropping a type must be a decision.
  t.deepEqual([...EVENT_TYPES].sort(), [...REQUIRED_TYPES, ...VALISE_TYPES].sort());
  t.true(isEventType('transfer.downloaded'));
  t.false(isEventType('transfer.exploded'));
  t.false(isEventType(42));
});

test('every family has types, and every type is a lower-case dotted name with a description', (t) => {
  for (const family of Object.keys(EVENT_FAMILIES)) {
    t.true(
      EVENT_CATALOG.some((e) => e.family === family),
      `family ${family}`,
    );
  }
  // (That a type's family is the prefix of its name is what GET /v1/webhooks/events is checked to serve, below;
  // the catalog derives one from the other, so comparing them here could not fail.)
  for (const entry of EVENT_CATALOG) {
    t.regex(entry.type, /^[a-z_]+(\.[a-z0-9_]+)?$/);
    t.true(entry.description.length > 10, `${entry.type} has a description`);
  }
});

test('every data schema is an inline draft 2020-12 object schema that compiles', (t) => {
  for (const entry of EVENT_CATALOG as EventDefinition[]) {
    const schema = entry.data;
    t.is(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', entry.type);
    t.is(schema.type, 'object', entry.type);
    t.true(isPlainObject(schema.properties) && Object.keys(schema.properties).length > 0, entry.type);
    t.true(
      (schema.required ?? []).every((name) => name in (schema.properties ?? {})),
      `${entry.type}: required ⊆ properties`,
    );
    t.false(JSON.stringify(schema).includes('$ref'), `${entry.type} has no $ref`);
    t.notThrows(() => compile(schema), entry.type);
    t.deepEqual(JSON.parse(JSON.stringify(schema)), schema, `${entry.type} is plain JSON`);
  }
  t.notThrows(() => compile(EVENT_ENVELOPE_SCHEMA));
});

test('the validator is not vacuous: it catches each kind of mismatch', (t) => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      at: { type: 'string', format: 'date-time' },
      kind: { type: 'string', enum: ['a', 'b'] },
      note: { type: ['string', 'null'] },
      count: { type: 'integer', minimum: 1 },
      tags: { type: 'array', items: { type: 'string' } },
      code: { type: 'string', pattern: '^evt_' },
    },
    required: ['id', 'at', 'kind', 'note'],
  };
  const check = compile(schema);
  const good = { id: '7f9c2f1e-3b0a-4c5d-8e6f-0a1b2c3d4e5f', at: '2026-05-14T10:00:00.000Z', kind: 'a', note: null };
  t.deepEqual(check(good, true), []);
  t.deepEqual(check({ ...good, count: 2, tags: ['x'], code: 'evt_1' }, true), []);
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...good, id: 'nope' }, /not a uuid/],
    [{ ...good, at: '2026-05-14' }, /not a date-time/],
    [{ ...good, kind: 'c' }, /not one of/],
    [{ ...good, note: 3 }, /expected string or null/],
    [{ ...good, count: 1.5 }, /expected integer/],
    [{ ...good, count: 0 }, /below 1/],
    [{ ...good, tags: [1] }, /expected string/],
    [{ ...good, code: 'x' }, /does not match/],
    [{ at: good.at, kind: 'a', note: null }, /id is missing/],
  ];
  for (const [value, message] of bad) t.regex(check(value).join('; '), message, JSON.stringify(value));
  t.deepEqual(check({ ...good, extra: 1 }), [], 'undeclared members pass outside strict mode');
  t.regex(check({ ...good, extra: 1 }, true).join(), /extra is not declared/);
  t.throws(() => compile({ type: 'object', properties: {}, required: ['x'] }), { message: /not declared/ });
  t.throws(() => compile({ $ref: '#/x' } as unknown as JsonSchema), { message: /unsupported keyword \$ref/ });
  t.throws(() => compile({ type: 'string', format: 'hostname' } as unknown as JsonSchema), { message: /format/ });
});

test("the rule triggers are the spec's list, and the revocation reasons are those DELETE /v1/api-keys accepts", (t) => {
  t.deepEqual([...RULE_TRIGGERS].sort(), [...SPEC_TRIGGERS].sort());
  for (const trigger of RULE_TRIGGERS) t.true(isEventType(trigger), trigger);
  // What the catalog tells consumers `reason` can be, against what the route's validation lets through.
  const revoked = EVENT_CATALOG.find((e) => e.type === 'api_key.revoked') as EventDefinition | undefined;
  const documented = revoked?.data.properties?.reason?.enum;
  const payload = (revokeRoute.options as { validate: { payload: { describe(): any } } }).validate.payload;
  const accepted = payload.describe().keys.reason.allow;
  t.true(Array.isArray(documented) && documented.length > 0, 'api_key.revoked documents its reasons');
  t.deepEqual([...(documented ?? [])].sort(), [...accepted].sort());
  for (const reason of ['manual', 'compromised', 'rotated', 'suspicious_activity']) {
    t.true(accepted.includes(reason), `the spec's example reason ${reason}`);
  }
});

test('the envelope schema requires id, type, timestamp and data, and knows every type', (t) => {
  t.deepEqual(EVENT_ENVELOPE_SCHEMA.required, ['id', 'type', 'timestamp', 'data']);
  const sample = { id: `evt_${'0'.repeat(32)}`, type: 'ping', timestamp: new Date().toISOString(), data: {} };
  for (const type of [...REQUIRED_TYPES, ...VALISE_TYPES]) {
    t.deepEqual(validateEnvelope({ ...sample, type }, true), [], `an envelope of ${type} is valid`);
  }
  t.notDeepEqual(validateEnvelope({ ...sample, type: 'pong' }), []);
  t.notDeepEqual(validateEnvelope({ ...sample, id: 'evt_1' }), [], 'the id pattern is checked');
  t.notDeepEqual(validateEnvelope({ id: sample.id, type: 'ping', timestamp: sample.timestamp }), [], 'data required');
});

test('GET /v1/webhooks/events serves the catalog, sorted, in the list envelope', async (t) => {
  // A bare hapi server: the route is public and needs nothing from the app's services.
  const server = Hapi.server();
  server.route(eventCatalogRoute);
  await server.initialize();
  t.teardown(() => server.stop());
  const response = await server.inject('/v1/webhooks/events');
  t.is(response.statusCode, 200, response.payload);
  const body = JSON.parse(response.payload);
  t.is(body.object, 'list');
  t.false(body.has_more);
  t.is(body.next_cursor, null);
  t.is(body.offset, null);
  t.is(body.limit, EVENT_CATALOG.length);
  t.is(body.data.length, EVENT_CATALOG.length);
  const types = body.data.map((e: { type: string }) => e.type);
  t.deepEqual(types, [...EVENT_TYPES].sort());
  for (const item of body.data) {
    t.deepEqual(Object.keys(item).sort(), ['data_schema', 'description', 'family', 'type']);
    const entry = EVENT_CATALOG.find((e) => e.type === item.type);
    t.deepEqual(item.data_schema, entry?.data);
    t.is(item.family, item.type.split('.')[0], `${item.type} is served in the family its name says`);
    t.is(item.description, entry?.description);
  }
  t.deepEqual(body.envelope, EVENT_ENVELOPE_SCHEMA);
  t.is((eventCatalogRoute.options as { auth?: unknown }).auth, false, 'public: no API key');
});

test('docs/events.md carries what scripts/events-doc.ts generates', async (t) => {
  const doc = await readFile(new URL('../docs/events.md', import.meta.url), 'utf8');
  const begin = '<!-- BEGIN GENERATED by scripts/events-doc.ts -->\n';
  const end = '<!-- END GENERATED -->';
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  t.true(from >= 0 && to > from, 'the generated section is marked');
  t.is(doc.slice(from + begin.length, to).trim(), renderEventDocs().trim(), 'regenerate and paste the section');
});

// ---- Real rows from the running API and worker. ----

let api: TestApi;
let ws: TestWorkspace;
/** Scenarios that failed, so a missing event points at its cause. */
const failures: string[] = [];
let scenarios: Promise<void> | undefined;

// Started by the first test that needs rows, so the static tests above run without the stack.
function scenariosRun(): Promise<void> {
  scenarios ??= (async () => {
    api = await startApi();
    ws = await api.workspace('Event catalog');
    // Every scenario runs at once; each waits on the worker for its own transfer.
    const runs: Record<string, () => Promise<unknown>> = {
      apiKeys,
      apiKeyExpiry,
      passwordAndDownloads,
      geoBlocked,
      endToEnd,
      approvals,
      infected,
      scanFailed,
      tooLargeToScan,
      expiry,
      uploadIncomplete,
      failingWebhook,
      ruleActions,
      intakes,
      collections,
      recipients,
      coffres,
      gdpr,
      members,
      billing,
      mcpTokens,
    };
    const results = await Promise.allSettled(Object.values(runs).map((run) => run()));
    results.forEach((result, index) => {
      if (result.status === 'rejected') failures.push(`${Object.keys(runs)[index]}: ${result.reason}`);
    });
  })();
  return scenarios;
}
test.after.always(async () => {
  if (!scenarios) return;
  await scenarios.catch(() => {});
  await api?.close();
});

const tenant = (environment: 'live' | 'test' | 'sandbox' = 'live') => ({ workspaceId: ws.workspace_id, environment });
const rowsOf = (type: string, environment?: 'live' | 'test' | 'sandbox') =>
  createEventQueries(api.services.db).listByType(tenant(environment), type);

async function ok(response: Promise<ApiResponse>, expected: number): Promise<ApiResponse> {
  const answer = await response;
  if (answer.status !== expected) throw new Error(`expected ${expected}, got ${answer.status}: ${answer.text}`);
  return answer;
}

async function apiKeys() {
  const key = ws.keys.live;
  const created = await ok(
    api.call('POST', '/v1/api-keys', {
      key,
      body: { name: 'catalog', key_type: 'restricted', scopes: ['transfers:read'] },
    }),
    201,
  );
  await ok(api.call('POST', '/v1/api-keys', { key, body: { name: 'catalog full', mfa_code: ws.mfa() } }), 201);
  const id = created.body.id;
  await ok(
    api.call('PATCH', `/v1/api-keys/${id}`, {
      key,
      body: { name: 'catalog renamed', description: 'events', max_uses: null },
    }),
    200,
  );
  await ok(api.call('POST', `/v1/api-keys/${id}/rotate`, { key, body: { grace_period_hours: 0 } }), 200);
  await ok(api.call('DELETE', `/v1/api-keys/${id}`, { key, body: { reason: 'compromised' } }), 200);
}

async function mcpTokens() {
  const key = ws.keys.live;
  const created = await ok(
    api.call('POST', '/v1/mcp/tokens', { key, body: { name: 'catalog agent', scopes: ['transfers:read'] } }),
    201,
  );
  await ok(api.call('DELETE', `/v1/mcp/tokens/${created.body.id}`, { key }), 200);
}

async function apiKeyExpiry() {
  // A key that lives two seconds: the expireApiKey workflow records api_key.expired.
  await ok(
    api.call('POST', '/v1/api-keys', {
      key: ws.keys.live,
      body: { name: 'brief', key_type: 'restricted', scopes: ['transfers:read'], expires_in_days: 2 / 86_400 },
    }),
    201,
  );
  await eventually(async () => ((await rowsOf('api_key.expired')).length > 0 ? true : undefined), 30_000);
}

async function activeTransfer(body: Record<string, unknown>, bytes: Buffer = content(2048)) {
  const created = await createTransfer(api, ws.keys.live, {
    files: [{ name: 'file.bin', size: bytes.length }],
    ...body,
  });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  return created;
}

async function passwordAndDownloads() {
  const created = await activeTransfer({
    password: 'open sesame',
    max_downloads: 1,
    recipient: uniqueAddress('catalog'),
    transfer_title: 'Catalog',
  });
  await ok(links(api, created.transfer.short_code, { password: 'wrong' }), 403);
  await ok(links(api, created.transfer.short_code, { password: 'open sesame' }), 200);
  await ok(api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live }), 200);
}

async function geoBlocked() {
  // The test API sees the loopback address, whose country is not known: a restricted transfer refuses it.
  const created = await activeTransfer({ allowed_countries: ['US'] });
  await ok(links(api, created.transfer.short_code), 403);
}

async function endToEnd() {
  const plaintext = content(4096);
  const blob = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key: randomBytes(32), plaintextSize: plaintext.length })),
  );
  await activeTransfer({ encryption_mode: 'e2e' }, blob);
}

async function approvals() {
  const [first, second] = await Promise.all([
    activeTransfer({ approval_required: true }),
    activeTransfer({ approval_required: true }),
  ]);
  const decide = (id: string, body: Record<string, unknown>) =>
    ok(api.call('POST', `/v1/transfers/${id}/approve`, { key: ws.keys.live, body }), 200);
  await decide(first.transfer.id, { decision: 'approved', note: 'Checked' });
  await decide(second.transfer.id, { decision: 'rejected' });
}

async function infected() {
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'eicar.com', size: EICAR.length }] });
  await put(created.upload_urls[0]?.url ?? '', Buffer.from(EICAR));
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'deleted');
}

async function scanFailed() {
  // Stored bytes altered before any worker scans them: an API on a task queue of its own, whose
  // worker starts only once the upload is stored and altered (test/scan-failed.test.ts).
  const taskQueue = `catalog-scan-failed-${randomBytes(6).toString('hex')}`;
  const late = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  let worker: ReturnType<typeof startWorker> | undefined;
  try {
    const bytes = content(2048);
    const created = await createTransfer(late, ws.keys.live, { files: [{ name: 'altered.bin', size: bytes.length }] });
    await put(created.upload_urls[0]?.url ?? '', bytes);
    await alterStoredBytes(late, created.transfer.id);
    worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
    await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'deleted', 90_000);
  } finally {
    if (worker) await kill(worker);
    await late.close();
  }
}

async function tooLargeToScan() {
  // Gzip inside gzip, 18 deep: past clamd's archive nesting limit (MaxRecursion, 17), so it cannot
  // read the file whole (what a file past StreamMaxLength gives, without sending 1 GiB).
  let nested = content(1024);
  for (let depth = 0; depth < 18; depth++) nested = gzipSync(nested);
  const created = await activeTransfer({}, nested);
  const scanned = await ok(api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live }), 200);
  if (scanned.body.scan_status !== 'not_scanned_too_large') throw new Error(`scan_status ${scanned.body.scan_status}`);
}

async function expiry() {
  const bytes = content(1024);
  const created = await createTransfer(api, ws.keys.live, {
    expires_in_hours: 5 / 3600,
    files: [{ name: 'brief.bin', size: bytes.length }],
  });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'expired', 40_000);
}

async function uploadIncomplete() {
  // The upload deadline is set by the API that creates the transfer: give this one a three-second window.
  const hasty = await startApi({ UPLOAD_WINDOW_HOURS: String(3 / 3600) });
  try {
    const created = await createTransfer(hasty, ws.keys.live, { files: [{ name: 'never.bin', size: 10 }] });
    await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'deleted', 40_000);
  } finally {
    await hasty.close();
  }
}

async function intakes() {
  const key = ws.keys.live;
  // One submission allowed: it closes the intake (request.completed) once its file is stored.
  const capped = await ok(
    api.call('POST', '/v1/intakes', { key, body: { title: 'Catalog intake', limits: { max_submissions: 1 } } }),
    201,
  );
  const bytes = content(512);
  const started = await ok(
    api.call('POST', `/v1/intakes/${capped.body.id}/submissions`, {
      key: capped.body.publishable_key.key,
      body: { files: [{ name: 'doc.pdf', size: bytes.length }] },
    }),
    201,
  );
  await put(started.body.upload_urls[0].url, bytes);
  await eventually(async () => ((await rowsOf('request.submission_received')).length > 0 ? true : undefined), 30_000);
  await ok(api.call('DELETE', `/v1/intakes/${capped.body.id}`, { key }), 200);
  // An intake that expires in three seconds (the intakeLifecycle workflow records request.expired).
  await ok(api.call('POST', '/v1/intakes', { key, body: { title: 'Brief intake', expires_in_hours: 3 / 3600 } }), 201);
  await eventually(async () => ((await rowsOf('request.expired')).length > 0 ? true : undefined), 30_000);
}

async function failingWebhook() {
  // A receiver that always answers 503: pinged (ping), then failing past WEBHOOK_DISABLE_AFTER (webhook.disabled).
  const receiver = await startReceiver();
  receiver.answer(() => ({ status: 503 }));
  try {
    const hook = await ok(
      api.call('POST', '/v1/webhooks', {
        key: ws.keys.live,
        body: { url: receiver.url(), events: ['api_key.created'] },
      }),
      201,
    );
    await ok(api.call('POST', `/v1/webhooks/${hook.body.id}/test`, { key: ws.keys.live }), 200);
    await ok(
      api.call('POST', '/v1/api-keys', {
        key: ws.keys.live,
        body: { name: 'wakes the webhook', key_type: 'restricted', scopes: ['transfers:read'] },
      }),
      201,
    );
    await eventually(async () => ((await rowsOf('webhook.disabled')).length > 0 ? true : undefined), 90_000, 500);
  } finally {
    await receiver.close();
  }
}

async function ruleActions() {
  // Rules limited by a condition to one transfer, so the other scenarios' transfers are left alone.
  const recipient = uniqueAddress('rules');
  const when = { trigger_event: 'transfer.created', trigger_conditions: { recipient_email: recipient } };
  for (const [action_type, action_config] of [
    ['extend_expiry', { hours: 2 }],
    ['archive_transfer', {}],
  ] as const) {
    await ok(
      api.call('POST', '/v1/rules', {
        key: ws.keys.live,
        body: { name: action_type, ...when, action_type, action_config },
      }),
      201,
    );
  }
  await createTransfer(api, ws.keys.live, { recipient, files: [{ name: 'ruled.bin', size: 1 }] });
  for (const type of ['transfer.expiry_extended', 'transfer.archived']) {
    await eventually(async () => ((await rowsOf(type)).length > 0 ? true : undefined), 30_000);
  }
}

async function collections() {
  // Every collection.* type: created with a transfer (item_added), renamed and its link turned off
  // (updated), the transfer taken out (item_removed), then deleted.
  const key = ws.keys.live;
  const transfer = await createTransfer(api, key, { files: [{ name: 'grouped.bin', size: 1 }] });
  const created = await ok(
    api.call('POST', '/v1/collections', { key, body: { title: 'Catalog', transfer_ids: [transfer.transfer.id] } }),
    201,
  );
  const path = `/v1/collections/${created.body.id}`;
  await ok(api.call('PATCH', path, { key, body: { title: 'Catalog renamed', description: 'events' } }), 200);
  await ok(api.call('DELETE', `${path}/share-link`, { key }), 200);
  await ok(api.call('DELETE', `${path}/transfers/${transfer.transfer.id}`, { key }), 200);
  await ok(api.call('DELETE', path, { key }), 200);
}

async function recipients() {
  // The address book by hand, then a download completed through a personal link.
  const entry = await ok(
    api.call('POST', '/v1/recipients', { key: ws.keys.live, body: { email: uniqueAddress('book'), tags: ['vip'] } }),
    201,
  );
  await ok(api.call('PATCH', `/v1/recipients/${entry.body.id}`, { key: ws.keys.live, body: { name: 'Ann' } }), 200);
  await ok(api.call('DELETE', `/v1/recipients/${entry.body.id}`, { key: ws.keys.live }), 200);
  const bytes = content(4096);
  const created = await activeTransfer({ recipients: [uniqueAddress('personal')] }, bytes);
  const sent = await ok(api.call('GET', `/v1/transfers/${created.transfer.id}/recipients`, { key: ws.keys.live }), 200);
  const code = new URL(sent.body.data[0].share_url).pathname.split('/').pop();
  const issued = await ok(links(api, code ?? ''), 200);
  const body = Buffer.from(await (await fetch(issued.body.files[0].download_url)).arrayBuffer());
  if (!body.equals(bytes)) throw new Error('the personal link served other bytes');
  await eventually(async () => ((await rowsOf('recipient.download_completed')).length > 0 ? true : undefined), 30_000);
}

async function coffres() {
  // Every coffre.* type: a vault created, an item added (item_uploaded), a member opening it (accessed).
  const key = ws.keys.live;
  const created = await ok(api.call('POST', '/v1/coffres', { key, body: { name: 'Catalog room' } }), 201);
  const bytes = content(1024);
  const item = await ok(
    api.call('POST', `/v1/coffres/${created.body.id}/items`, { key, body: { name: 'kept.bin', size: bytes.length } }),
    201,
  );
  await put(item.body.upload_url.url, bytes);
  const member = await ok(
    api.call('POST', `/v1/coffres/${created.body.id}/members`, {
      key,
      body: { email: uniqueAddress('vault'), access: 'download' },
    }),
    201,
  );
  const token = new URL(member.body.invitation_url).pathname.split('/').pop();
  await ok(api.call('GET', `/v1/coffre-access/${token}`), 200);
  await eventually(async () => ((await rowsOf('coffre.item_uploaded')).length > 0 ? true : undefined), 30_000);
}

async function gdpr() {
  // workspace.*: a legal document accepted, a GDPR export asked for and completed.
  const key = ws.keys.live;
  const document = await ok(api.call('GET', '/v1/legal/documents/conditions-utilisation', { key }), 200);
  await ok(
    api.call('POST', '/v1/legal/acceptances', {
      key,
      body: { slug: document.body.slug, version: document.body.version },
    }),
    201,
  );
  await ok(api.call('POST', '/v1/gdpr/exports', { key, body: { user_id: ws.user_id } }), 202);
  await eventually(async () => ((await rowsOf('workspace.export_completed')).length > 0 ? true : undefined), 60_000);
}

async function members() {
  // Every member.* type through SCIM: created, updated, deactivated, reactivated, deleted. The token
  // is made in the domain layer: the other scenarios spend this workspace's verification codes.
  const token = `scim_${randomBase62(48)}`;
  await createScimQueries(api.services.db).insertToken(
    tenant(),
    'catalog',
    hashKeyValue(api.services.keys.apiKeyPepper, token),
    token.slice(0, 11),
    ws.user_id,
  );
  const scim = (method: string, path: string, body?: unknown) => api.call(method, path, { key: token, body });
  const patch = (value: Record<string, unknown>) => ({
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', value }],
  });
  const created = await ok(
    scim('POST', '/v1/scim/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: uniqueAddress('member'),
      externalId: 'catalog-1',
    }),
    201,
  );
  const path = `/v1/scim/Users/${created.body.id}`;
  await ok(scim('PATCH', path, patch({ title: 'Catalog' })), 200);
  await ok(scim('PATCH', path, patch({ active: false })), 200);
  await ok(scim('PATCH', path, patch({ active: true })), 200);
  await ok(scim('DELETE', path), 204);
}

async function billing() {
  // Every billing.* type: the payment processor's events, signed by its own library with the
  // endpoint secret the test environment sets (scripts/lib.sh), for a customer the workspace owns.
  const [secret] = api.services.config.billing.webhookSecrets;
  if (!secret) throw new Error('BILLING_WEBHOOK_SECRET is not set');
  const signer = new Stripe('sk_test_valise_not_a_key');
  const customer = `cus_catalog${randomBytes(6).toString('hex')}`;
  const seconds = Math.floor(Date.now() / 1000);
  const invoice = {
    id: `in_catalog${randomBytes(6).toString('hex')}`,
    customer,
    number: null,
    status: 'open',
    amount_due: 1200,
    amount_paid: 0,
    currency: 'eur',
    created: seconds,
    metadata: { workspace_id: ws.workspace_id },
  };
  const subscription = {
    id: 'sub_catalog',
    customer,
    status: 'active',
    items: { data: [{ price: { id: 'price_team', lookup_key: 'team' }, current_period_end: seconds + 86_400 }] },
    metadata: { workspace_id: ws.workspace_id },
  };
  const objects: Array<[string, Record<string, unknown>]> = [
    ['customer.subscription.created', subscription],
    ['invoice.finalized', invoice],
    ['invoice.payment_failed', { ...invoice, attempt_count: 1, next_payment_attempt: seconds + 3600 }],
    ['invoice.paid', { ...invoice, number: 'CAT-1', status: 'paid', amount_paid: 1200 }],
  ];
  for (const [index, [type, object]] of objects.entries()) {
    const payload = JSON.stringify({
      id: `evt_catalog_${randomBytes(8).toString('hex')}`,
      type,
      created: seconds + index,
      data: { object },
    });
    const header = signer.webhooks.generateTestHeaderString({ payload, secret });
    await ok(
      api.call('POST', '/v1/billing/processor/stripe', {
        rawBody: payload,
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
      }),
      200,
    );
  }
}

const emitted = EVENT_CATALOG.filter((entry) => entry.emitted);

test('every scenario ran to completion', async (t) => {
  await scenariosRun();
  // A scenario that failed half-way may still have recorded the rows the tests below look for.
  t.deepEqual(failures, []);
});

for (const entry of emitted) {
  test(`recorded ${entry.type} rows match the catalog schema exactly`, async (t) => {
    await scenariosRun();
    const environments =
      entry.type === 'api_key.created' ? (['live', 'test', 'sandbox'] as const) : (['live'] as const);
    const rows: EventRow[] = [];
    for (const environment of environments) rows.push(...(await rowsOf(entry.type, environment)));
    t.true(rows.length > 0, `no ${entry.type} row was recorded; failed scenarios: ${failures.join(' | ') || 'none'}`);
    const validate = validators.get(entry.type);
    if (!validate) return t.fail(`no validator for ${entry.type}`);
    for (const row of rows) {
      t.deepEqual(validate(row.data, true), [], `${row.id}: ${JSON.stringify(row.data)}`);
      const envelope = { id: row.id, type: row.type, timestamp: row.created_at.toISOString(), data: row.data };
      t.deepEqual(validateEnvelope(envelope, true), [], `${row.id} as a delivery envelope`);
    }
  });
}

test('every type the running code recorded is in the catalog and marked emitted', async (t) => {
  await scenariosRun();
  const types = await api.services.db.anyFirst(sql.type(z.object({ type: z.string() }))`
    SELECT DISTINCT type FROM events WHERE workspace_id = ${ws.workspace_id} ORDER BY type`);
  const emittedTypes: string[] = emitted.map((e) => e.type).sort();
  t.deepEqual(
    types.filter((type) => !emittedTypes.includes(type)),
    [],
    'recorded but not marked emitted',
  );
  t.deepEqual(
    emittedTypes.filter((type) => !types.includes(type)),
    [],
    `marked emitted but not recorded; failed scenarios: ${failures.join(' | ') || 'none'}`,
  );
});

test('the rows cover each variant the schemas allow for', async (t) => {
  await scenariosRun();
  // Distinct values, sorted so the comparison ignores arrival order (null sorts as 'null').
  const values = async (type: string, pick: (data: any) => unknown) =>
    [...new Set((await rowsOf(type)).map((row) => pick(row.data)))].sort((a, b) => String(a).localeCompare(String(b)));
  t.deepEqual(await values('transfer.scanned', (d) => d.scan_status), [
    'clean',
    'infected',
    'not_scanned_e2e',
    'not_scanned_too_large',
  ]);
  t.deepEqual(await values('transfer.deleted', (d) => d.reason), ['revoked', 'upload_incomplete']);
  t.deepEqual(await values('transfer.e2e_created', (d) => d.transfer.encryption_mode), ['e2e']);
  t.deepEqual(await values('transfer.approved', (d) => d.note), ['Checked']);
  t.deepEqual(await values('transfer.rejected', (d) => d.note), [null]);
  t.deepEqual(await values('api_key.revoked', (d) => d.reason), ['compromised']);
  t.true((await values('transfer.created', (d) => d.transfer.recipient)).includes(null));
  t.true((await values('transfer.created', (d) => typeof d.transfer.recipient)).includes('string'));
  t.deepEqual(
    await values('api_key.created', (d) => 'scopes' in d.api_key),
    [true],
    'every created key carries its scopes, bootstrap keys included',
  );
  t.deepEqual(await values('api_key.updated', (d) => d.changed.join()), ['name,description,max_uses']);
  t.deepEqual(await values('recipient.created', (d) => d.source), ['api', 'transfer']);
  t.deepEqual(await values('transfer.downloaded', (d) => typeof d.recipient), ['object', 'undefined']);
});
