import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import test from 'ava';
import { createDecryptStream, createEncryptStream } from '../lib/crypto/segmented-aead.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { extendExpiry } from '../lib/transfers/manage.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { mailsTo, uniqueAddress, waitForMail } from './helpers/mail.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Managed');
  other = await api.workspace('Elsewhere');
});
test.after.always(() => api.close());

async function activeTransfer(body: Record<string, unknown> = {}, bytes = content(4096), key = ws.keys.live) {
  const created = await createTransfer(api, key, { files: [{ name: 'file.bin', size: bytes.length }], ...body });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, key, created.transfer.id, (tr) => tr.status === 'active');
  return created;
}

const events = (type: string) =>
  createEventQueries(api.services.db).listByType({ workspaceId: ws.workspace_id, environment: 'live' }, type);

test('approval circuit: pending blocks downloads; approving records who, when and why, then mails', async (t) => {
  const recipient = uniqueAddress('approval-recipient');
  const created = await activeTransfer({ approval_required: true, recipient });
  const pending = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.is(pending.body.approval_status, 'pending');
  const blocked = await links(api, created.transfer.short_code);
  t.is(blocked.status, 403);
  t.is(blocked.body.error.reason, 'awaiting_approval');
  t.deepEqual(await mailsTo(recipient), [], 'no link goes out before approval');

  const approved = await api.call('POST', `/v1/transfers/${created.transfer.id}/approve`, {
    key: ws.keys.live,
    body: { decision: 'approved', note: 'Checked by legal' },
  });
  t.is(approved.status, 200, approved.text);
  t.is(approved.body.approval_status, 'approved');
  t.is(approved.body.approved_by, ws.user_id);
  t.is(approved.body.approval_note, 'Checked by legal');
  t.truthy(approved.body.approved_at);
  for (const field of ['id', 'workspace_id', 'user_id', 'transfer_title', 'short_code']) t.true(field in approved.body);
  t.is((await links(api, created.transfer.short_code)).status, 200);
  // The worker builds links from its own PUBLIC_BASE_URL; the test API listens elsewhere.
  const sent = await waitForMail(recipient, /.+/);
  // The recipient's personal link to the transfer (docs/recipients.md).
  const personal = new URL(approved.body.recipients[0].share_url).pathname;
  t.true(sent.text.includes(personal), 'the recipient is mailed once approved');
  const owner = (await api.call('GET', '/v1/me', { key: ws.keys.live })).body.user.email;
  t.truthy(await waitForMail(owner, /approv/i), 'the owner is asked to approve and told the decision');
  t.true(
    (await events('transfer.approved')).some((e) => (e.data.transfer as { id: string }).id === created.transfer.id),
  );
  t.true(
    (await events('transfer.approval_requested')).some(
      (e) => (e.data.transfer as { id: string }).id === created.transfer.id,
    ),
  );
});

test('rejection clears approved_at and keeps downloads blocked', async (t) => {
  const created = await activeTransfer({ approval_required: true });
  const rejected = await api.call('POST', `/v1/transfers/${created.transfer.id}/approve`, {
    key: ws.keys.live,
    body: { decision: 'rejected', note: 'Wrong client' },
  });
  t.is(rejected.status, 200);
  t.is(rejected.body.approval_status, 'rejected');
  t.is(rejected.body.approved_at, null);
  t.is(rejected.body.approved_by, ws.user_id);
  const blocked = await links(api, created.transfer.short_code);
  t.is(blocked.body.error.reason, 'rejected');
});

test('approve: 422 when not required, 400 on a bad decision, 404 elsewhere, 403 without transfers:manage', async (t) => {
  const plain = await activeTransfer();
  const notRequired = await api.call('POST', `/v1/transfers/${plain.transfer.id}/approve`, {
    key: ws.keys.live,
    body: { decision: 'approved' },
  });
  t.is(notRequired.status, 422);
  t.is(notRequired.body.error.code, 'validation_error');
  for (const body of [{}, { decision: 'maybe' }, { decision: 'APPROVED' }]) {
    const bad = await api.call('POST', `/v1/transfers/${plain.transfer.id}/approve`, { key: ws.keys.live, body });
    t.is(bad.status, 400);
    t.is(bad.body.error.param, 'decision');
  }
  const foreign = await api.call('POST', `/v1/transfers/${plain.transfer.id}/approve`, {
    key: other.keys.live,
    body: { decision: 'approved' },
  });
  t.is(foreign.status, 404);
  const writer = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'writer', key_type: 'restricted', scopes: ['transfers:write', 'transfers:read'] },
  });
  const denied = await api.call('POST', `/v1/transfers/${plain.transfer.id}/approve`, {
    key: writer.body.key,
    body: { decision: 'approved' },
  });
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'scope_missing');
});

test('folders: file a transfer, take it out twice, and never reach another workspace', async (t) => {
  const created = await activeTransfer();
  const folder = await api.call('POST', '/v1/folders', { key: ws.keys.live, body: { name: 'Clients 2026' } });
  t.is(folder.status, 201);
  const filed = await api.call('PUT', `/v1/transfers/${created.transfer.id}/folder`, {
    key: ws.keys.live,
    body: { folder_id: folder.body.id },
  });
  t.deepEqual(filed.body, { object: 'transfer_folder', transfer_id: created.transfer.id, folder_id: folder.body.id });
  t.is(
    (await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live })).body.folder_id,
    folder.body.id,
  );
  const listed = await api.call('GET', '/v1/folders', { key: ws.keys.live });
  t.is(listed.body.data.find((f: any) => f.id === folder.body.id).transfer_count, 1);
  for (let i = 0; i < 2; i++) {
    const removed = await api.call('DELETE', `/v1/transfers/${created.transfer.id}/folder`, { key: ws.keys.live });
    t.is(removed.status, 200);
    t.deepEqual(removed.body, { object: 'transfer_folder', transfer_id: created.transfer.id, folder_id: null });
  }
  const elsewhereFolder = await api.call('POST', '/v1/folders', { key: other.keys.live, body: { name: 'Theirs' } });
  const cross = await api.call('PUT', `/v1/transfers/${created.transfer.id}/folder`, {
    key: ws.keys.live,
    body: { folder_id: elsewhereFolder.body.id },
  });
  t.is(cross.status, 404);
  t.is(cross.body.error.param, 'folder_id');
  t.is((await api.call('DELETE', `/v1/transfers/${created.transfer.id}/folder`, { key: other.keys.live })).status, 404);
});

test('passwords: missing or wrong ones are refused and recorded, the right one unlocks', async (t) => {
  const created = await activeTransfer({ password: 'correct horse battery staple' });
  const view = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
  t.true(view.body.password_required);
  const missing = await links(api, created.transfer.short_code);
  t.is(missing.status, 403);
  t.is(missing.body.error.param, 'password');
  const wrong = await links(api, created.transfer.short_code, { password: 'Tr0ub4dor&3' });
  t.is(wrong.status, 403);
  const right = await links(api, created.transfer.short_code, { password: 'correct horse battery staple' });
  t.is(right.status, 200);
  const failures = (await events('transfer.password_failed')).filter(
    (e) => (e.data.transfer as { id: string }).id === created.transfer.id,
  );
  t.is(failures.length, 2);
  const shown = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.true(shown.body.password_protected);
  t.false(shown.text.includes('scrypt'), 'the hash is never shown');
});

test('wrong passwords from one address are rate-limited on a link, the right one included', async (t) => {
  const limited = await startApi({ PASSWORD_ATTEMPTS_PER_15_MIN: '3' });
  t.teardown(() => limited.close());
  const own = await limited.workspace('Guessing');
  const bytes = content(100);
  const created = await createTransfer(limited, own.keys.live, {
    password: 'secret phrase',
    files: [{ name: 'f', size: bytes.length }],
  });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(limited, own.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const statuses = [];
  for (let i = 0; i < 4; i++)
    statuses.push((await links(limited, created.transfer.short_code, { password: 'guess' })).status);
  t.deepEqual(statuses, [403, 403, 403, 429]);
  t.is((await links(limited, created.transfer.short_code, { password: 'secret phrase' })).status, 429);
});

test('max_downloads holds under concurrency: 20 parallel downloads of a transfer capped at 5, exactly 5 succeed', async (t) => {
  const created = await activeTransfer({ max_downloads: 5 });
  const attempts = await Promise.all(Array.from({ length: 20 }, () => links(api, created.transfer.short_code)));
  t.is(attempts.filter((r) => r.status === 200).length, 5);
  const refused = attempts.filter((r) => r.status !== 200);
  t.true(refused.every((r) => r.status === 403 && r.body.error.reason === 'limit_reached'));
  const shown = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.is(shown.body.total_downloads, 5);
  const mine = (type: string) =>
    events(type).then((all) => all.filter((e) => (e.data.transfer as { id: string }).id === created.transfer.id));
  t.is((await mine('transfer.downloaded')).length, 5);
  t.is((await mine('transfer.first_download')).length, 1);
  t.is((await mine('transfer.limit_reached')).length, 1);
});

test('end-to-end transfers round-trip with a client-side key the server never sees', async (t) => {
  const key = randomBytes(32);
  const plaintext = content(150 * 1024);
  const blob = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key, plaintextSize: plaintext.length })),
  );
  const created = await createTransfer(api, ws.keys.live, {
    encryption_mode: 'e2e',
    files: [{ name: 'sealed.bin', size: blob.length }],
  });
  t.false(created.share_url.includes('#'), 'the share link carries no key');
  await put(created.upload_urls[0]?.url ?? '', blob);
  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  t.is(active.encryption_mode, 'e2e');
  t.is(active.scan_status, 'not_scanned_e2e');
  const issued = await links(api, created.transfer.short_code);
  const downloaded = await fetchBytes(issued.body.files[0].download_url);
  t.true(downloaded.bytes.equals(blob), 'the server returns the ciphertext untouched');
  const decrypted = await buffer(Readable.from([downloaded.bytes]).pipe(createDecryptStream({ key })));
  t.true(decrypted.equals(plaintext));
  const tooSmall = await api.call('POST', '/v1/transfers', {
    key: ws.keys.live,
    body: { encryption_mode: 'e2e', files: [{ name: 'x', size: 5 }] },
  });
  t.is(tooSmall.status, 400);
});

test('sandbox limits: 10 MiB per file, 10 files, 5 downloads, 24-hour expiry', async (t) => {
  const key = ws.keys.sandbox;
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ files: [{ name: 'big', size: 10 * 1024 * 1024 + 1 }] }, 'files.0.size'],
    [{ files: Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, size: 1 })) }, 'files'],
    [{ files: [{ name: 'f', size: 1 }], max_downloads: 6 }, 'max_downloads'],
    [{ files: [{ name: 'f', size: 1 }], expires_in_hours: 25 }, 'expires_in_hours'],
  ];
  for (const [body, param] of cases) {
    const response = await api.call('POST', '/v1/transfers', { key, body });
    t.is(response.status, 400, JSON.stringify(body));
    t.is(response.body.error.param, param);
  }
  const ok = await createTransfer(api, key, { files: [{ name: 'f', size: 1 }] });
  t.is((await api.call('GET', `/v1/transfers/${ok.transfer.id}`, { key })).body.max_downloads, 5);
});

test('sandbox: the 26th transfer in 24 hours is refused with 429', async (t) => {
  const own = await api.workspace('Busy sandbox');
  for (let i = 0; i < 25; i++) await createTransfer(api, own.keys.sandbox, { files: [{ name: 'f', size: 1 }] });
  const refused = await api.call('POST', '/v1/transfers', {
    key: own.keys.sandbox,
    body: { files: [{ name: 'f', size: 1 }] },
  });
  t.is(refused.status, 429);
  t.is(refused.body.error.code, 'rate_limited');
  t.truthy(refused.headers.get('retry-after'));
  t.is(
    (await api.call('POST', '/v1/transfers', { key: own.keys.test, body: { files: [{ name: 'f', size: 1 }] } })).status,
    201,
  );
});

test('isolation: other environments and workspaces get 404 on every transfer route', async (t) => {
  const created = await activeTransfer();
  const id = created.transfer.id;
  for (const key of [ws.keys.test, ws.keys.sandbox, other.keys.live]) {
    const attempts = [
      await api.call('GET', `/v1/transfers/${id}`, { key }),
      await api.call('DELETE', `/v1/transfers/${id}`, { key }),
      await api.call('POST', `/v1/transfers/${id}/approve`, { key, body: { decision: 'approved' } }),
      await api.call('DELETE', `/v1/transfers/${id}/folder`, { key }),
    ];
    for (const response of attempts) t.is(response.status, 404);
    const list = await api.call('GET', '/v1/transfers?limit=100', { key });
    t.false(list.body.data.some((tr: any) => tr.id === id));
  }
  t.is((await api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live })).body.status, 'active');
});

test('listing filters by status and searches title, short code and recipient', async (t) => {
  const own = await api.workspace('Searching');
  const bytes = content(64);
  const a = await createTransfer(api, own.keys.live, {
    transfer_title: 'Contrat Dupont',
    recipient: 'marie@example.com',
    files: [{ name: 'f', size: bytes.length }],
  });
  const b = await createTransfer(api, own.keys.live, { transfer_title: 'Invoice', files: [{ name: 'f', size: 1 }] });
  await put(a.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, own.keys.live, a.transfer.id, (tr) => tr.status === 'active');
  const ids = async (query: string) =>
    (await api.call('GET', `/v1/transfers?${query}`, { key: own.keys.live })).body.data.map((tr: any) => tr.id);
  t.deepEqual(await ids('status=active'), [a.transfer.id]);
  t.deepEqual(await ids('status=scanning'), [b.transfer.id]);
  t.deepEqual(await ids('search=dupont'), [a.transfer.id]);
  t.deepEqual(await ids('search=marie%40'), [a.transfer.id]);
  t.deepEqual(await ids(`search=${b.transfer.short_code}`), [b.transfer.id]);
  t.deepEqual(await ids('search=%25'), []);
  t.deepEqual(await ids(''), [b.transfer.id, a.transfer.id]);
  const bad = await api.call('GET', '/v1/transfers?status=lost', { key: own.keys.live });
  t.is(bad.status, 400);
});

test('the share page renders for people and answers JSON to clients; missing files 400', async (t) => {
  const created = await activeTransfer({ transfer_title: '<script>alert(1)</script>' });
  const page = await fetch(created.share_url);
  const html = await page.text();
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  t.false(html.includes('<script>alert(1)</script>'));
  t.true(html.includes('&lt;script&gt;'));
  const json = await fetch(created.share_url, { headers: { accept: 'application/json' } });
  t.is(((await json.json()) as { short_code: string }).short_code, created.transfer.short_code);
  const missing = await api.call('POST', '/v1/transfers', { key: ws.keys.live, body: {} });
  t.is(missing.status, 400);
  t.is(missing.body.error.param, 'files');
});

test('extending expiry moves both the row and the workflow timer', async (t) => {
  const created = await activeTransfer({ expires_in_hours: 15 / 3600 });
  const original = Date.parse(
    (await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live })).body.expires_at,
  );
  const me = (await api.call('GET', '/v1/me', { key: ws.keys.live })).body;
  const caller = {
    workspaceId: ws.workspace_id,
    environment: 'live' as const,
    userId: ws.user_id,
    apiKeyId: me.api_key.id,
    keyType: 'full' as const,
    scopes: ['*'],
  };
  const expiresAt = await extendExpiry(api.services, caller, created.transfer.id, 8 / 3600);
  t.is(expiresAt.getTime(), original + 8_000);
  const expired = await waitForTransfer(
    api,
    ws.keys.live,
    created.transfer.id,
    (tr) => tr.status === 'expired',
    60_000,
  );
  t.is(expired.status_reason, 'expired');
  // When it expired, as the workflow recorded it: at the extended deadline, not at the original one.
  const [event] = (await events('transfer.expired')).filter(
    (e) => (e.data.transfer as { id: string }).id === created.transfer.id,
  );
  t.truthy(event, 'transfer.expired was recorded');
  t.true(
    (event?.created_at.getTime() ?? 0) >= expiresAt.getTime(),
    `expired at ${event?.created_at.toISOString()}, the extended deadline is ${expiresAt.toISOString()}`,
  );
});

test('a list page presents each transfer with its own files, in their order', async (t) => {
  const own = await api.workspace('Listing files');
  const one = await createTransfer(api, own.keys.live, {
    files: [
      { name: 'one-a.txt', size: 1 },
      { name: 'one-b.txt', size: 2 },
    ],
  });
  const two = await createTransfer(api, own.keys.live, { files: [{ name: 'two.txt', size: 3 }] });
  await createTransfer(api, own.keys.live, { files: [{ name: 'three.txt', size: 4 }] });
  const listed = await api.call('GET', '/v1/transfers?limit=100', { key: own.keys.live });
  t.is(listed.status, 200);
  const namesOf = (id: string) =>
    listed.body.data.find((tr: any) => tr.id === id)?.files.map((f: any) => `${f.name}:${f.size}`);
  t.deepEqual(namesOf(one.transfer.id), ['one-a.txt:1', 'one-b.txt:2']);
  t.deepEqual(namesOf(two.transfer.id), ['two.txt:3']);
  t.is(listed.body.data.length, 3);
});
