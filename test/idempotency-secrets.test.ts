import test from 'ava';
import { z } from 'zod';
import { sql } from '../lib/db/sql.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// Idempotency records keep the response of a write for replays. Those responses
// can carry once-shown secrets (API key values, whsec_ secrets, upload URLs):
// only the API key that made the request may replay them, and the database
// never holds them in clear.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

async function createKey(ws: TestWorkspace, body: Record<string, unknown>) {
  const response = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { mfa_code: ws.mfa(), ...body } });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${response.text}`);
  return response.body as { id: string; key: string };
}

const idempotencyKey = (label: string) => ({ 'idempotency-key': `${label}-${process.hrtime.bigint()}` });

/** Every idempotency record of a workspace, each row as its JSON text, read straight from the table. */
async function storedRows(ws: TestWorkspace): Promise<string[]> {
  const rows = await api.services.db.any(sql.type(z.object({ row: z.string() }))`
    SELECT row_to_json(r)::text AS row FROM idempotency_records r WHERE workspace_id = ${ws.workspace_id}`);
  return rows.map((r) => r.row);
}

test('the same API key replaying its Idempotency-Key gets the stored body, secret included, with the replay header', async (t) => {
  const ws = await api.workspace('Replay');
  const headers = idempotencyKey('same-key');
  const body = { name: 'replayed', key_type: 'restricted', scopes: ['transfers:read'] };
  const first = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body, headers });
  const second = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body, headers });
  t.is(first.status, 201, first.text);
  t.is(second.status, 201);
  t.is(second.headers.get('x-service-idempotent-replay'), 'true');
  t.deepEqual(second.body, first.body);
  t.regex(second.body.key, /^svc_rk_live_/);

  const hookHeaders = idempotencyKey('same-key-hook');
  const hook = { url: 'https://hooks.example.com/replay' };
  const created = await api.call('POST', '/v1/webhooks', { key: ws.keys.live, body: hook, headers: hookHeaders });
  const replayed = await api.call('POST', '/v1/webhooks', { key: ws.keys.live, body: hook, headers: hookHeaders });
  t.is(created.status, 201, created.text);
  t.is(replayed.headers.get('x-service-idempotent-replay'), 'true');
  t.is(replayed.body.secret, created.body.secret);
});

test('another full key of the workspace reusing the Idempotency-Key never receives the first key value', async (t) => {
  const ws = await api.workspace('Other full key');
  const other = await createKey(ws, { name: 'second full key' });
  const headers = idempotencyKey('other-full');
  const body = { name: 'minted', key_type: 'restricted', scopes: ['transfers:read'] };
  const first = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body, headers });
  t.is(first.status, 201, first.text);
  const attempt = await api.call('POST', '/v1/api-keys', { key: other.key, body, headers });
  t.not(attempt.headers.get('x-service-idempotent-replay'), 'true');
  t.false(attempt.text.includes(first.body.key), 'the first key value is not disclosed');
  // The other key's request is its own: it ran and minted a key of its own.
  t.is(attempt.status, 201, attempt.text);
  t.not(attempt.body.id, first.body.id);
});

test('a restricted key replaying a full key creation never obtains the full key value', async (t) => {
  const ws = await api.workspace('Restricted replay');
  const manager = await createKey(ws, { name: 'manager', key_type: 'restricted', scopes: ['api_keys:manage'] });
  const headers = idempotencyKey('restricted-replay');
  const body = { name: 'a full key', mfa_code: ws.mfa() };
  const first = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body, headers });
  t.is(first.status, 201, first.text);
  t.regex(first.body.key, /^svc_live_/);
  const attempt = await api.call('POST', '/v1/api-keys', { key: manager.key, body, headers });
  t.not(attempt.headers.get('x-service-idempotent-replay'), 'true');
  t.false(attempt.text.includes(first.body.key), 'the full key value is not disclosed');
  t.false(/svc_live_/.test(attempt.text), 'no full live key is handed to the restricted key');
});

test('a restricted key reusing the Idempotency-Key of a webhook or a transfer gets neither its secret nor its upload URLs', async (t) => {
  const ws = await api.workspace('Restricted writer');
  const writer = await createKey(ws, {
    name: 'writer',
    key_type: 'restricted',
    scopes: ['webhooks:manage', 'transfers:write'],
  });
  const hookHeaders = idempotencyKey('hook');
  const hook = { url: 'https://hooks.example.com/secret' };
  const created = await api.call('POST', '/v1/webhooks', { key: ws.keys.live, body: hook, headers: hookHeaders });
  t.is(created.status, 201, created.text);
  const hookAttempt = await api.call('POST', '/v1/webhooks', { key: writer.key, body: hook, headers: hookHeaders });
  t.not(hookAttempt.headers.get('x-service-idempotent-replay'), 'true');
  t.false(hookAttempt.text.includes(created.body.secret), 'the whsec_ secret is not disclosed');

  const transferHeaders = idempotencyKey('transfer');
  const transfer = { files: [{ name: 'a.txt', size: 5, mime_type: 'text/plain' }] };
  const sent = await api.call('POST', '/v1/transfers', { key: ws.keys.live, body: transfer, headers: transferHeaders });
  t.is(sent.status, 201, sent.text);
  const uploadUrl: string = sent.body.upload_urls[0].url;
  const transferAttempt = await api.call('POST', '/v1/transfers', {
    key: writer.key,
    body: transfer,
    headers: transferHeaders,
  });
  t.not(transferAttempt.headers.get('x-service-idempotent-replay'), 'true');
  t.false(transferAttempt.text.includes(uploadUrl), 'the upload URL is not disclosed');
  t.false(transferAttempt.text.includes(sent.body.transfer.id), 'nor the transfer it belongs to');
});

test('the stored records hold no key value, whsec_ secret or upload token in clear', async (t) => {
  const ws = await api.workspace('Sealed');
  const minted = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'sealed', key_type: 'restricted', scopes: ['transfers:read'] },
    headers: idempotencyKey('sealed-key'),
  });
  const hook = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: 'https://hooks.example.com/sealed' },
    headers: idempotencyKey('sealed-hook'),
  });
  const sent = await api.call('POST', '/v1/transfers', {
    key: ws.keys.live,
    body: { files: [{ name: 'a.txt', size: 5, mime_type: 'text/plain' }] },
    headers: idempotencyKey('sealed-transfer'),
  });
  t.is(minted.status, 201, minted.text);
  t.is(hook.status, 201, hook.text);
  t.is(sent.status, 201, sent.text);
  const uploadToken = String(sent.body.upload_urls[0].url).split('/').pop() ?? '';
  t.true(uploadToken.length > 20);

  const rows = await storedRows(ws);
  t.is(rows.length, 3);
  for (const row of rows) {
    t.false(row.includes('svc_'), row);
    t.false(row.includes('whsec_'), row);
    t.false(row.includes(minted.body.key.slice(-20)), row);
    t.false(row.includes(uploadToken), row);
    t.false(row.includes('/v1/uploads/'), row);
  }
});

test('a sealed response moved onto another record does not open: it is never replayed there', async (t) => {
  const ws = await api.workspace('Moved record');
  const other = await createKey(ws, { name: 'other full key' });
  const headers = idempotencyKey('moved');
  const body = { name: 'moved', key_type: 'restricted', scopes: ['transfers:read'] };
  const first = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body, headers });
  const second = await api.call('POST', '/v1/api-keys', {
    key: other.key,
    body: { ...body, name: 'moved (other)' },
    headers,
  });
  t.is(first.status, 201, first.text);
  t.is(second.status, 201, second.text);
  // Someone with write access to the table copies the first record's sealed response onto the second's.
  const moved = await api.services.db.query(sql.typeAlias('void')`
    UPDATE idempotency_records
    SET response_sealed = (SELECT response_sealed FROM idempotency_records
                           WHERE workspace_id = ${ws.workspace_id} AND environment = 'live'
                             AND idempotency_key = ${headers['idempotency-key']} AND api_key_id <> ${other.id})
    WHERE workspace_id = ${ws.workspace_id} AND environment = 'live'
      AND idempotency_key = ${headers['idempotency-key']} AND api_key_id = ${other.id}`);
  t.is(moved.rowCount, 1);
  const replay = await api.call('POST', '/v1/api-keys', {
    key: other.key,
    body: { ...body, name: 'moved (other)' },
    headers,
  });
  t.false(replay.text.includes(first.body.key), 'the first response is not served to the other key');
  t.not(replay.status, 201);
  t.is(replay.body.error.code, 'idempotency_conflict');
});

test('a record left from before records were bound to keys is never replayed and never run again: 409', async (t) => {
  const ws = await api.workspace('Legacy record');
  const headers = idempotencyKey('legacy');
  // What migration 0010 leaves of an older record: no API key, no stored response.
  await api.services.db.query(sql.typeAlias('void')`
    INSERT INTO idempotency_records (workspace_id, environment, idempotency_key, request_fingerprint, state, response_status)
    VALUES (${ws.workspace_id}, 'live', ${headers['idempotency-key']}, 'legacy', 'completed', 201)`);
  const body = { name: 'legacy', key_type: 'restricted', scopes: ['transfers:read'] };
  const retry = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body, headers });
  t.is(retry.status, 409, retry.text);
  t.is(retry.body.error.code, 'idempotency_conflict');
  const list = await api.call('GET', '/v1/api-keys?limit=100', { key: ws.keys.live });
  t.false(
    list.body.data.some((k: { name: string }) => k.name === 'legacy'),
    'the request did not run',
  );
});
