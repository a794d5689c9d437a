import { randomUUID } from 'node:crypto';
import test from 'ava';
import {
  AuthenticationError,
  NotFoundError,
  PermissionError,
  ValidationError,
  Valise,
  type ValiseError,
} from '../../sdk/src/index.ts';
import { sdkSession } from './session.ts';

// Resource calls, error mapping and pagination against the real API.

const sdk = sdkSession('SDK api');

function expectApiError(t: { is: (a: unknown, b: unknown, m?: string) => void }, error: ValiseError | undefined) {
  t.is(typeof error?.requestId, 'string');
  t.is(error?.requestId?.startsWith('req_'), true, 'the request id is the API one');
}

test('a bad key is a 401 AuthenticationError with code, status and request id', async (t) => {
  const bad = new Valise({ apiKey: 'svc_live_nope', baseUrl: sdk.api.url });
  const error = await t.throwsAsync(bad.meta.me(), { instanceOf: AuthenticationError });
  t.is(error?.code, 'invalid_api_key');
  t.is(error?.status, 401);
  expectApiError(t, error);
  const none = await t.throwsAsync(new Valise({ baseUrl: sdk.api.url }).meta.me(), { instanceOf: AuthenticationError });
  t.is(none?.code, 'missing_api_key');
});

test('a missing scope is a 403 PermissionError scope_missing, with the member the API adds', async (t) => {
  const restricted = await sdk.valise.apiKeys.create({
    name: 'read only',
    key_type: 'restricted',
    scopes: ['transfers:read'],
    mfa_code: sdk.ws.mfa(),
  });
  t.true(restricted.key.length > 10);
  const readOnly = new Valise({ apiKey: restricted.key, baseUrl: sdk.api.url });
  const error = await t.throwsAsync(readOnly.folders.create({ name: 'nope' }), { instanceOf: PermissionError });
  t.is(error?.code, 'scope_missing');
  t.is(error?.status, 403);
  t.is(error?.body.required_scope, 'folders:manage');
  expectApiError(t, error);
});

test('an unknown id is a 404 NotFoundError; a bad body a 400 ValidationError naming the param', async (t) => {
  const missing = await t.throwsAsync(sdk.valise.transfers.get(randomUUID()), { instanceOf: NotFoundError });
  t.is(missing?.code, 'not_found');
  t.is(missing?.status, 404);
  expectApiError(t, missing);
  const invalid = await t.throwsAsync(sdk.valise.transfers.create({ files: [{ name: 'a/b', size: 1 }] }), {
    instanceOf: ValidationError,
  });
  t.is(invalid?.code, 'validation_error');
  t.is(invalid?.status, 400);
  t.is(invalid?.param, 'files.0.name');
  expectApiError(t, invalid);
});

test('mfa_required keeps sensitive_scopes; the corrected call succeeds', async (t) => {
  const error = await t.throwsAsync(sdk.valise.apiKeys.create({ name: 'full' }), { instanceOf: AuthenticationError });
  t.is(error?.code, 'mfa_required');
  t.true(((error?.body.sensitive_scopes ?? []) as string[]).includes('api_keys:manage'));
  const created = await sdk.valise.apiKeys.create({ name: 'full', mfa_code: sdk.ws.mfa() });
  const fetched = await sdk.valise.apiKeys.get(created.id);
  t.is(fetched.name, 'full');
  const updated = await sdk.valise.apiKeys.update(created.id, { description: 'from the SDK' });
  t.is(updated.description, 'from the SDK');
  const revoked = await sdk.valise.apiKeys.revoke(created.id, { reason: 'manual' });
  t.truthy(revoked.revoked_at);
});

test('list() is one page when awaited and every item when iterated, following next_cursor', async (t) => {
  const names = Array.from({ length: 25 }, (_, i) => `sdk folder ${String(i).padStart(2, '0')}`);
  for (const name of names) await sdk.valise.folders.create({ name });

  const first = await sdk.valise.folders.list({ limit: 10 });
  t.is(first.data.length, 10);
  t.true(first.hasMore);
  t.is(typeof first.nextCursor, 'string');

  const seen: string[] = [];
  for await (const folder of sdk.valise.folders.list({ limit: 10 })) seen.push(folder.name);
  t.is(seen.length, 25);
  t.deepEqual([...seen].sort(), names);
  t.deepEqual(seen, [...names].reverse(), 'newest first, no repeats across pages');

  let pages = 0;
  for (let page: Awaited<ReturnType<typeof first.next>> = first; page; page = await page.next()) pages++;
  t.is(pages, 3);
});

test('webhooks, rules, audit and meta answer through their namespaces', async (t) => {
  const me = await sdk.valise.meta.me();
  t.is(me.object, 'me');
  const welcome = await new Valise({ baseUrl: sdk.api.url }).meta.welcome();
  t.is(welcome.object, 'welcome');

  const hook = await sdk.valise.webhooks.create({ url: 'https://example.com/hooks', events: ['transfer.created'] });
  t.regex(hook.secret, /^whsec_/);
  const updated = await sdk.valise.webhooks.update(hook.id, { is_active: false });
  t.false(updated.is_active);
  t.true((await sdk.valise.webhooks.list().toArray()).some((w) => w.id === hook.id));
  t.true((await sdk.valise.webhooks.eventTypes()).data.length > 0);
  t.is((await sdk.valise.webhooks.delete(hook.id)).deleted, true);

  const rule = await sdk.valise.rules.create({
    name: 'tag it',
    trigger_event: 'transfer.created',
    action_type: 'tag_transfer',
    action_config: { tag: 'sdk' },
  });
  t.is((await sdk.valise.rules.get(rule.id)).name, 'tag it');
  t.false((await sdk.valise.rules.update(rule.id, { is_enabled: false })).is_enabled);
  t.is((await sdk.valise.rules.executions(rule.id)).data.length, 0);
  t.true((await sdk.valise.rules.delete(rule.id)).deleted);

  const entries = await sdk.valise.audit.list({ action: 'rule.create', limit: 5 });
  t.true(entries.data.length >= 1);
  t.deepEqual([...new Set(entries.data.map((entry) => entry.action))], ['rule.create']);
  t.true(
    entries.data.some((entry) => entry.resource_id === rule.id),
    'the entry names the rule just created',
  );
});

test('audit: verify reports a valid chain; export iterates entries with their chain fields, and download gives the bytes', async (t) => {
  await sdk.valise.rules.create({
    name: 'audited',
    trigger_event: 'transfer.created',
    action_type: 'tag_transfer',
    action_config: { tag: 'sdk' },
  });
  const verification = await sdk.valise.audit.verify();
  t.is(verification.object, 'audit_verification');
  t.true(verification.valid);
  t.true(verification.entries_checked >= 1);
  const exported = [];
  for await (const entry of sdk.valise.audit.export({ action: 'rule.create' })) exported.push(entry);
  t.true(exported.length >= 1);
  t.true(exported.every((entry) => entry.action === 'rule.create' && /^[0-9a-f]{64}$/.test(entry.entry_hash)));
  const seqs = exported.map((entry) => entry.seq);
  t.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
  );
  const csv = await sdk.valise.audit.download({ format: 'csv', action: 'rule.create' });
  t.is(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.true((await csv.text()).startsWith('id,seq,created_at,'));
});
