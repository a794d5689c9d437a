import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import test from 'ava';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { sql } from '../lib/db/sql.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress, waitForMail } from './helpers/mail.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import { content, fetchBytes, put } from './helpers/transfers.ts';
import { checkZip } from './helpers/zip.ts';

// Vaults end to end (docs/coffres.md): the owner's routes, members invited by
// mail reaching the vault through their signed link with exactly the access
// they were given, the access log, coffre.* events delivered to a webhook,
// revocation, expiry, crypto-shredding, isolation, ciphertext at rest.

const MARKER = 'VALISE-COFFRE-SECRET';

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
let receiver: Receiver;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Vaults');
  other = await api.workspace('Vaults elsewhere');
  receiver = await startReceiver();
});
const zipDir = mkdtempSync(join(tmpdir(), 'valise-coffre-zip-'));
test.after.always(async () => {
  rmSync(zipDir, { recursive: true, force: true });
  await receiver?.close();
  await api?.close();
});

const key = () => ws.keys.live;
const call = (method: string, path: string, body?: unknown, k: string | undefined = key()) =>
  api.call(method, path, { key: k, ...(body === undefined ? {} : { body }) });
const visit = (method: string, path: string, body?: unknown) => call(method, path, body, undefined);

async function ok(response: Promise<ApiResponse>, status: number): Promise<ApiResponse> {
  const answer = await response;
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer;
}

async function newCoffre(body: Record<string, unknown> = {}) {
  return (await ok(call('POST', '/v1/coffres', { name: 'Deal room', ...body }), 201)).body;
}

/** An item uploaded by the owner, waited for until scanned and available. */
async function ownerItem(coffreId: string, name: string, bytes: Buffer) {
  const created = await ok(call('POST', `/v1/coffres/${coffreId}/items`, { name, size: bytes.length }), 201);
  const uploaded = await put(created.body.upload_url.url, bytes);
  if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status}`);
  return waitAvailable(coffreId, created.body.item.id);
}

async function waitAvailable(coffreId: string, itemId: string) {
  return eventually(async () => {
    const item = await call('GET', `/v1/coffres/${coffreId}/items/${itemId}`);
    return item.body.status === 'available' ? item.body : undefined;
  }, 60_000);
}

async function invite(coffreId: string, access: string, extra: Record<string, unknown> = {}) {
  const email = uniqueAddress(`member-${access}`);
  const member = await ok(call('POST', `/v1/coffres/${coffreId}/members`, { email, access, ...extra }), 201);
  const token = new URL(member.body.invitation_url).pathname.split('/').at(-1) ?? '';
  return { ...member.body, email, token };
}

const eventsOf = async (type: string, coffreId: string) =>
  (await createEventQueries(api.services.db).listByType({ workspaceId: ws.workspace_id, environment: 'live' }, type))
    .filter((e) => (e.data.coffre as { id: string }).id === coffreId)
    .reverse();

async function storedObjects(coffreId: string, workspaceId = ws.workspace_id): Promise<Buffer[]> {
  const { client, bucket } = api.services.objects;
  const listed = await client.send(
    new ListObjectsV2Command({ Bucket: bucket, Prefix: `live/${workspaceId}/coffres/${coffreId}/` }),
  );
  const blobs: Buffer[] = [];
  for (const object of listed.Contents ?? []) {
    const got = await client
      .send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }))
      .catch((error: Error) => (error.name === 'NoSuchKey' ? null : Promise.reject(error)));
    if (got) blobs.push(Buffer.from(await (got.Body?.transformToByteArray() ?? new Uint8Array())));
  }
  return blobs;
}

test('members see and do exactly what their access allows; the log and coffre.* events record it', async (t) => {
  await ok(
    call('POST', '/v1/webhooks', {
      url: receiver.url(),
      events: ['coffre.created', 'coffre.accessed', 'coffre.item_uploaded'],
    }),
    201,
  );
  const coffre = await newCoffre({ name: 'Series A data room', description: 'Due diligence' });
  t.regex(coffre.id, /^cof_[0-9a-v]{26}$/);
  t.is(coffre.object, 'coffre');
  t.is(coffre.status, 'active');
  t.is(coffre.expires_at, null);

  const contract = content(300_000, MARKER);
  const memo = content(5_000, MARKER);
  const contractItem = await ownerItem(coffre.id, 'contract.pdf', contract);
  await ownerItem(coffre.id, 'memo.txt', memo);
  t.regex(contractItem.id, /^cofi_[0-9a-f]{32}$/);
  t.is(contractItem.scan_status, 'clean');
  t.is(contractItem.download_expires_in, 300);
  // The owner's own download link, logged as the API key's.
  t.true((await fetchBytes(contractItem.download_url)).bytes.equals(contract));

  const viewer = await invite(coffre.id, 'view', { name: 'Vera Viewer' });
  const downloader = await invite(coffre.id, 'download');
  const uploader = await invite(coffre.id, 'upload');
  t.regex(viewer.id, /^cofm_[0-9a-v]{26}$/);
  t.is(viewer.access, 'view');
  t.is(viewer.status, 'active');
  t.regex(viewer.invitation_url, new RegExp(`^${api.url}/v/[\\w-]+\\.[\\w-]+$`));
  const expiresIn = Date.parse(viewer.invitation_expires_at) - Date.now();
  t.true(expiresIn > 6.9 * 86_400_000 && expiresIn <= 7 * 86_400_000, 'seven days by default');

  // Each member is mailed their own link.
  for (const member of [viewer, downloader, uploader]) {
    const mail = await waitForMail(member.email, /invited to the vault/);
    // The worker builds links from its own PUBLIC_BASE_URL: the path is what must agree.
    t.true(mail.text.includes(`/v/${member.token}`), 'the mail carries the link the owner was shown');
  }
  const listed = await ok(call('GET', `/v1/coffres/${coffre.id}/members`), 200);
  t.is(listed.body.data.length, 3);
  t.false(JSON.stringify(listed.body).includes(viewer.token), 'links are never listed');

  // view: lists names and sizes, cannot download.
  const seen = await ok(visit('GET', `/v1/coffre-access/${viewer.token}`), 200);
  t.is(seen.body.coffre.name, 'Series A data room');
  t.deepEqual(seen.body.member, {
    email: viewer.email,
    name: 'Vera Viewer',
    access: 'view',
    can_download: false,
    can_upload: false,
    invitation_expires_at: viewer.invitation_expires_at,
  });
  t.deepEqual(
    seen.body.items.map((i: { name: string; size: number }) => [i.name, i.size]),
    [
      ['memo.txt', memo.length],
      ['contract.pdf', contract.length],
    ],
  );
  const refused = await visit('POST', `/v1/coffre-access/${viewer.token}/items/${contractItem.id}/download-link`);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'forbidden');
  const viewerUpload = await visit('POST', `/v1/coffre-access/${viewer.token}/items`, { name: 'x.txt', size: 1 });
  t.is(viewerUpload.status, 403);
  t.is(viewerUpload.body.error.code, 'forbidden');

  // download: the bytes, whole and by range.
  await ok(visit('GET', `/v1/coffre-access/${downloader.token}`), 200);
  const link = await ok(
    visit('POST', `/v1/coffre-access/${downloader.token}/items/${contractItem.id}/download-link`),
    200,
  );
  t.is(link.body.expires_in, 300);
  const whole = await fetchBytes(link.body.download_url);
  t.is(whole.status, 200);
  t.true(whole.bytes.equals(contract), 'byte-identical');
  t.regex(whole.headers.get('content-disposition') ?? '', /contract\.pdf/);
  const part = await fetchBytes(link.body.download_url, { Range: 'bytes=1000-1999' });
  t.is(part.status, 206);
  t.true(part.bytes.equals(contract.subarray(1000, 2000)));
  const downloaderUpload = await visit('POST', `/v1/coffre-access/${downloader.token}/items`, {
    name: 'x.txt',
    size: 1,
  });
  t.is(downloaderUpload.status, 403);

  // upload: adds an item, which the others then see once scanned.
  await ok(visit('GET', `/v1/coffre-access/${uploader.token}`), 200);
  const report = content(20_000, MARKER);
  const added = await ok(
    visit('POST', `/v1/coffre-access/${uploader.token}/items`, {
      name: 'report.xlsx',
      size: report.length,
      mime_type: 'application/vnd.ms-excel',
    }),
    201,
  );
  t.is(added.body.item.uploaded_by.type, 'member');
  t.is(added.body.item.uploaded_by.member_id, uploader.id);
  t.is(added.body.upload_url.file_id, added.body.item.id);
  t.is((await put(added.body.upload_url.url, report)).status, 200);
  await waitAvailable(coffre.id, added.body.item.id);
  const afterUpload = await ok(visit('GET', `/v1/coffre-access/${downloader.token}/items`), 200);
  t.is(afterUpload.body.data[0].name, 'report.xlsx');
  const reportLink = await ok(
    visit('POST', `/v1/coffre-access/${uploader.token}/items/${added.body.item.id}/download-link`),
    200,
  );
  t.true((await fetchBytes(reportLink.body.download_url)).bytes.equals(report), 'upload includes download');

  // The access log: every member action, by e-mail address.
  const log = await ok(call('GET', `/v1/coffres/${coffre.id}/access-log?limit=100`), 200);
  const entries = log.body.data.map((e: { actor: string; action: string; item_name: string | null }) => [
    e.actor,
    e.action,
    e.item_name,
  ]);
  const has = (actor: string, action: string, item: string | null = null) =>
    entries.some((e: unknown[]) => e[0] === actor && e[1] === action && e[2] === item);
  t.true(has(viewer.email, 'opened'));
  t.true(has(downloader.email, 'opened'));
  t.true(has(downloader.email, 'listed'));
  t.true(has(downloader.email, 'downloaded', 'contract.pdf'));
  t.true(has(uploader.email, 'uploaded', 'report.xlsx'));
  t.true(has(uploader.email, 'downloaded', 'report.xlsx'));
  t.false(has(viewer.email, 'downloaded', 'contract.pdf'), 'a refused download is not a download');
  const byKey = log.body.data.filter((e: { actor_type: string }) => e.actor_type === 'api_key');
  t.true(
    byKey.some((e: { action: string }) => e.action === 'downloaded'),
    "the owner's download is logged",
  );
  t.true(byKey.every((e: { ip_address: string | null; member_id: null }) => e.member_id === null));
  t.truthy(log.body.data.find((e: { action: string }) => e.action === 'opened').ip_address);

  // Events: recorded, and delivered to the webhook.
  t.is((await eventsOf('coffre.created', coffre.id)).length, 1);
  const accessed = await eventsOf('coffre.accessed', coffre.id);
  t.deepEqual(accessed.map((e) => e.data.accessed_by).sort(), [viewer.email, downloader.email, uploader.email].sort());
  await ok(visit('GET', `/v1/coffre-access/${viewer.token}`), 200);
  t.is((await eventsOf('coffre.accessed', coffre.id)).length, 3, 'once per member and day');
  const uploads = await eventsOf('coffre.item_uploaded', coffre.id);
  t.deepEqual(
    uploads.map((e) => [(e.data.item as { name: string }).name, e.data.uploaded_by]),
    [
      ['contract.pdf', null],
      ['memo.txt', null],
      ['report.xlsx', uploader.email],
    ],
  );
  const delivered = await eventually(async () => {
    const types = receiver.received
      .map((r) => JSON.parse(r.body) as { type: string; data: { coffre: { id: string } } })
      .filter((e) => e.data.coffre?.id === coffre.id)
      .map((e) => e.type);
    return types.length >= 7 ? types : undefined;
  }, 30_000);
  t.deepEqual(
    [...new Set(delivered)].sort(),
    ['coffre.accessed', 'coffre.created', 'coffre.item_uploaded'],
    'every coffre.* type reaches the webhook',
  );

  // At rest: ciphertext only, in MinIO and in PostgreSQL.
  const blobs = await storedObjects(coffre.id);
  t.is(blobs.length, 3);
  for (const blob of blobs) {
    t.false(blob.includes(MARKER), 'no plaintext in storage');
    t.false(blob.includes(contract.subarray(0, 64)));
  }
  const rows = await api.services.db.anyFirst(sql.unsafe`
    SELECT row_to_json(i)::text FROM coffre_items i WHERE coffre_id = ${coffre.id}`);
  t.false(rows.join('\n').includes(MARKER));
});

test('a revoked member is refused at once, links they hold too; a new invitation replaces the old link', async (t) => {
  const coffre = await newCoffre();
  const bytes = content(4096, MARKER);
  const item = await ownerItem(coffre.id, 'a.bin', bytes);
  const member = await invite(coffre.id, 'download');
  const link = await ok(visit('POST', `/v1/coffre-access/${member.token}/items/${item.id}/download-link`), 200);

  const revoked = await ok(call('DELETE', `/v1/coffres/${coffre.id}/members/${member.id}`), 200);
  t.is(revoked.body.status, 'revoked');
  t.truthy(revoked.body.revoked_at);
  const refused = await visit('GET', `/v1/coffre-access/${member.token}`);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'forbidden');
  t.is(refused.body.error.reason, 'revoked');
  t.is((await fetchBytes(link.body.download_url)).status, 403, 'an issued link dies with the membership');
  t.is((await call('DELETE', `/v1/coffres/${coffre.id}/members/${member.id}`)).status, 410);
  t.is((await call('PATCH', `/v1/coffres/${coffre.id}/members/${member.id}`, { access: 'view' })).status, 410);

  // The address may be invited again: a new member, a new link.
  const again = await invite(coffre.id, 'view');
  t.is((await call('POST', `/v1/coffres/${coffre.id}/members`, { email: again.email, access: 'view' })).status, 409);
  const resent = await ok(call('POST', `/v1/coffres/${coffre.id}/members/${again.id}/invitation`), 200);
  t.not(resent.body.invitation_url, again.invitation_url);
  const replaced = await visit('GET', `/v1/coffre-access/${again.token}`);
  t.is(replaced.status, 403);
  t.is(replaced.body.error.reason, 'replaced');
  const newToken = new URL(resent.body.invitation_url).pathname.split('/').at(-1);
  await ok(visit('GET', `/v1/coffre-access/${newToken}`), 200);

  // Access changes apply to the link in hand.
  await ok(call('PATCH', `/v1/coffres/${coffre.id}/members/${again.id}`, { access: 'download' }), 200);
  await ok(visit('POST', `/v1/coffre-access/${newToken}/items/${item.id}/download-link`), 200);
  await ok(call('PATCH', `/v1/coffres/${coffre.id}/members/${again.id}`, { access: 'view' }), 200);
  t.is((await visit('POST', `/v1/coffre-access/${newToken}/items/${item.id}/download-link`)).status, 403);

  // Tampered or unknown tokens.
  t.is((await visit('GET', `/v1/coffre-access/${newToken}x`)).status, 404);
  t.is((await visit('GET', '/v1/coffre-access/abc.def')).status, 404);
});

test('an expired invitation is 410; so is a vault past its expiry, whose items are shredded', async (t) => {
  // A far expiry first, moved close once the item is stored: the timer follows the change.
  const coffre = await newCoffre({ expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  const bytes = content(2048, MARKER);
  const item = await ownerItem(coffre.id, 'short.bin', bytes);
  const brief = await invite(coffre.id, 'download', { expires_in_days: 2 / 86_400 });
  const lasting = await invite(coffre.id, 'download');
  const moved = await ok(
    call('PATCH', `/v1/coffres/${coffre.id}`, { expires_at: new Date(Date.now() + 6000).toISOString() }),
    200,
  );
  t.true(Date.parse(moved.body.expires_at) < Date.parse(coffre.expires_at));
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const expired = await visit('GET', `/v1/coffre-access/${brief.token}`);
  t.is(expired.status, 410, expired.text);
  t.is(expired.body.error.code, 'not_found');
  t.is(expired.body.error.reason, 'invitation_expired');
  await ok(visit('GET', `/v1/coffre-access/${lasting.token}`), 200);

  // The vault's own expiry: members lose access, the item's key and blob are destroyed.
  await eventually(async () => {
    const got = await call('GET', `/v1/coffres/${coffre.id}`);
    return got.body.status === 'expired' ? true : undefined;
  }, 30_000);
  t.is((await visit('GET', `/v1/coffre-access/${lasting.token}`)).status, 410);
  t.is((await call('GET', `/v1/coffres/${coffre.id}/items/${item.id}`)).status, 410);
  const [row] = await api.services.db.any(sql.unsafe`
    SELECT status, data_key_wrapped FROM coffre_items WHERE coffre_id = ${coffre.id}`);
  t.deepEqual(row, { status: 'deleted', data_key_wrapped: null });
  await eventually(async () => ((await storedObjects(coffre.id)).length === 0 ? true : undefined), 30_000);
  t.is(
    (await call('POST', `/v1/coffres/${coffre.id}/members`, { email: uniqueAddress('late'), access: 'view' })).status,
    410,
  );
});

test('an expiry moved inside a transaction that commits late is the one the vault keeps', async (t) => {
  // The API signals the vault's workflow from inside the updating transaction (a failed signal
  // rolls the change back), so the workflow may read the row before the commit: it must wait for
  // the commit, not sleep on the old expiry. Here the commit comes 2 s after the signal.
  const coffre = await newCoffre({ expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  await api.services.db.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      UPDATE coffres SET expires_at = now() + interval '4 seconds' WHERE id = ${coffre.id}`);
    await api.services.workflows.coffres.watchExpiry({ workspaceId: ws.workspace_id, environment: 'live' }, coffre.id);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  });
  await eventually(async () => {
    const got = await call('GET', `/v1/coffres/${coffre.id}`);
    return got.body.status === 'expired' ? true : undefined;
  }, 30_000);
  t.pass();
});

test('deleting an item or the vault shreds it: keys at once, blobs after; links stop working', async (t) => {
  const coffre = await newCoffre();
  const first = await ownerItem(coffre.id, 'one.bin', content(1024, MARKER));
  const second = await ownerItem(coffre.id, 'two.bin', content(1024, MARKER));
  const member = await invite(coffre.id, 'download');

  const removed = await ok(call('DELETE', `/v1/coffres/${coffre.id}/items/${first.id}`), 200);
  t.deepEqual(removed.body, { id: first.id, object: 'coffre_item', deleted: true });
  t.is((await call('GET', `/v1/coffres/${coffre.id}/items/${first.id}`)).status, 410);
  t.is((await fetchBytes(first.download_url)).status, 410);
  const listed = await ok(call('GET', `/v1/coffres/${coffre.id}/items`), 200);
  t.deepEqual(
    listed.body.data.map((i: { id: string }) => i.id),
    [second.id],
  );

  const deleted = await ok(call('DELETE', `/v1/coffres/${coffre.id}`), 200);
  t.deepEqual(deleted.body, { id: coffre.id, object: 'coffre', deleted: true, items_destroyed: 1 }, 'the one left');
  t.is((await call('GET', `/v1/coffres/${coffre.id}`)).status, 404);
  t.is((await visit('GET', `/v1/coffre-access/${member.token}`)).status, 404);
  const keys = await api.services.db.anyFirst(sql.unsafe`
    SELECT data_key_wrapped FROM coffre_items WHERE coffre_id = ${coffre.id}`);
  t.deepEqual(keys, [null, null]);
  await eventually(async () => ((await storedObjects(coffre.id)).length === 0 ? true : undefined), 30_000);
});

test('validation: the envelope names the field; scopes are enforced', async (t) => {
  const bad = await call('POST', '/v1/coffres', { name: '' });
  t.is(bad.status, 400);
  t.is(bad.body.error.param, 'name');
  const past = await call('POST', '/v1/coffres', { name: 'x', expires_at: '2001-01-01T00:00:00Z' });
  t.is(past.status, 400);
  const coffre = await newCoffre();
  const badAccess = await call('POST', `/v1/coffres/${coffre.id}/members`, { email: 'a@b.test', access: 'admin' });
  t.is(badAccess.status, 400);
  t.is(badAccess.body.error.param, 'access');
  t.is((await call('GET', '/v1/coffres/cof_nope')).status, 400);
  t.is((await call('GET', `/v1/coffres/${coffre.id}/items/cofi_${'0'.repeat(32)}`)).status, 404);
  // An item's mime_type is checked as a transfer file's is (one definition, api/schemas.ts), from the
  // owner and from a member alike: it is the Content-Type of the item's downloads.
  const uploader = await invite(coffre.id, 'upload');
  for (const mime_type of ['not a type', 'text/html\r\nX-Injected: 1', 'text/plain; charset=utf-8', 'pdf', '']) {
    const item = { name: 'x.bin', size: 1, mime_type };
    for (const refused of [
      await call('POST', `/v1/coffres/${coffre.id}/items`, item),
      await visit('POST', `/v1/coffre-access/${uploader.token}/items`, item),
    ]) {
      t.is(refused.status, 400, `${JSON.stringify(mime_type)}: ${refused.text}`);
      t.is(refused.body.error.code, 'validation_error');
      t.is(refused.body.error.param, 'mime_type');
    }
  }
  await ok(
    call('POST', `/v1/coffres/${coffre.id}/items`, { name: 'x.pdf', size: 1, mime_type: 'application/pdf' }),
    201,
  );

  const reader = await ws.mintKey({ name: 'vault reader', key_type: 'restricted', scopes: ['coffres:read'] });
  t.is((await call('GET', `/v1/coffres/${coffre.id}`, undefined, reader.key)).status, 200);
  const denied = await call('POST', '/v1/coffres', { name: 'x' }, reader.key);
  t.is(denied.status, 403);
  const writer = await ws.mintKey({ name: 'vault writer', key_type: 'restricted', scopes: ['coffres:write'] });
  t.is(
    (await call('POST', `/v1/coffres/${coffre.id}/members`, { email: 'a@b.test', access: 'view' }, writer.key)).status,
    403,
  );
  t.is((await call('DELETE', `/v1/coffres/${coffre.id}`, undefined, writer.key)).status, 403);
});

test("another workspace's key and another environment's key get 404 on every owner route", async (t) => {
  const coffre = await newCoffre();
  const item = await ownerItem(coffre.id, 'mine.bin', content(512));
  const member = await invite(coffre.id, 'view');
  const routes: [string, string, unknown?][] = [
    ['GET', `/v1/coffres/${coffre.id}`],
    ['PATCH', `/v1/coffres/${coffre.id}`, { name: 'stolen' }],
    ['GET', `/v1/coffres/${coffre.id}/members`],
    ['POST', `/v1/coffres/${coffre.id}/members`, { email: uniqueAddress('thief'), access: 'upload' }],
    ['PATCH', `/v1/coffres/${coffre.id}/members/${member.id}`, { access: 'upload' }],
    ['POST', `/v1/coffres/${coffre.id}/members/${member.id}/invitation`],
    ['DELETE', `/v1/coffres/${coffre.id}/members/${member.id}`],
    ['GET', `/v1/coffres/${coffre.id}/items`],
    ['POST', `/v1/coffres/${coffre.id}/items`, { name: 'x.bin', size: 1 }],
    ['GET', `/v1/coffres/${coffre.id}/items/${item.id}`],
    ['DELETE', `/v1/coffres/${coffre.id}/items/${item.id}`],
    ['GET', `/v1/coffres/${coffre.id}/access-log`],
    ['DELETE', `/v1/coffres/${coffre.id}`],
  ];
  for (const stranger of [other.keys.live, ws.keys.test]) {
    for (const [method, path, body] of routes) {
      const answer = await call(method, path, body, stranger);
      t.is(answer.status, 404, `${method} ${path}`);
      t.is(answer.body.error.code, 'not_found');
    }
    const listed = await ok(call('GET', '/v1/coffres?limit=100', undefined, stranger), 200);
    t.false(listed.body.data.some((c: { id: string }) => c.id === coffre.id));
  }
  // Untouched.
  const still = await ok(call('GET', `/v1/coffres/${coffre.id}`), 200);
  t.is(still.body.name, 'Deal room');
  t.is(still.body.member_count, 1);
  t.is(still.body.item_count, 1);
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Saves a ZIP answer and reads it as unzip and Python's zipfile do. */
async function zipOf(response: { status: number; bytes: Buffer; headers: Headers }, name: string) {
  const path = join(zipDir, name);
  writeFileSync(path, response.bytes);
  return checkZip(path);
}

test('a member downloads a selection or the whole vault as one ZIP; the owner too; each item is logged', async (t) => {
  const coffre = await newCoffre({ name: 'Closing binder' });
  const files = {
    'term-sheet.pdf': content(300_000, MARKER),
    'cap table.xlsx': content(70_000, MARKER),
    'Zoë’s notes.txt': content(1_000, MARKER),
  };
  const items: Record<string, string> = {};
  for (const [name, bytes] of Object.entries(files)) items[name] = (await ownerItem(coffre.id, name, bytes)).id;
  const reader = await invite(coffre.id, 'download');
  const viewer = await invite(coffre.id, 'view');

  const chosen = [items['term-sheet.pdf'], items['Zoë’s notes.txt']];
  const link = await ok(visit('POST', `/v1/coffre-access/${reader.token}/archive-link`, { item_ids: chosen }), 200);
  t.is(link.body.object, 'archive_link');
  t.is(link.body.filename, 'Closing binder.zip');
  const selection = await fetchBytes(link.body.archive_url);
  t.is(selection.status, 200);
  t.is(selection.headers.get('content-type'), 'application/zip');
  t.is(Number(selection.headers.get('content-length')), link.body.size);
  const selected = await zipOf(selection, 'selection.zip');
  t.true(selected.unzipOk, selected.unzipOutput);
  t.deepEqual(selected.entries, {
    'term-sheet.pdf': sha256(files['term-sheet.pdf']),
    'Zoë’s notes.txt': sha256(files['Zoë’s notes.txt']),
  });

  const whole = await ok(visit('POST', `/v1/coffre-access/${reader.token}/archive-link`), 200);
  const all = await zipOf(await fetchBytes(whole.body.archive_url), 'whole.zip');
  t.true(all.unzipOk, all.unzipOutput);
  t.deepEqual(all.entries, Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, sha256(bytes)])));

  const ownerArchive = async (query: string) => {
    const response = await fetch(`${api.url}/v1/coffres/${coffre.id}/archive${query}`, {
      headers: { authorization: `Bearer ${key()}` },
    });
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
  };
  const one = await ownerArchive(`?item_ids=${items['cap table.xlsx']}`);
  t.is(one.status, 200);
  t.deepEqual((await zipOf(one, 'owner-one.zip')).entries, { 'cap table.xlsx': sha256(files['cap table.xlsx']) });
  const ownerAll = await zipOf(await ownerArchive(''), 'owner-all.zip');
  t.true(ownerAll.unzipOk, ownerAll.unzipOutput);
  t.deepEqual(ownerAll.entries, all.entries);

  // Each archived item is in the access log as downloaded, by whom it was.
  const log = await ok(call('GET', `/v1/coffres/${coffre.id}/access-log?limit=100`), 200);
  const downloads = log.body.data.filter((entry: { action: string }) => entry.action === 'downloaded');
  t.is(downloads.filter((entry: { actor: string }) => entry.actor === reader.email).length, 2 + 3);
  t.is(downloads.filter((entry: { actor_type: string }) => entry.actor_type === 'api_key').length, 1 + 3);
  const audit = await ok(call('GET', '/v1/audit?action=coffre.archive_download'), 200);
  t.is(audit.body.data[0]?.resource_id, coffre.id);

  // View access cannot; a name outside the vault is refused by name; the link dies with the access.
  const refused = await visit('POST', `/v1/coffre-access/${viewer.token}/archive-link`);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'forbidden');
  const stranger = await visit('POST', `/v1/coffre-access/${reader.token}/archive-link`, {
    item_ids: [`cofi_${'0'.repeat(32)}`],
  });
  t.is(stranger.status, 404);
  t.is(stranger.body.error.param, 'item_ids');
  const elsewhere = await newCoffre({ name: 'Another room' });
  const foreign = await ownerItem(elsewhere.id, 'foreign.pdf', content(10));
  const crossing = await visit('POST', `/v1/coffre-access/${reader.token}/archive-link`, { item_ids: [foreign.id] });
  t.is(crossing.status, 404, "another vault's item is not this member's to download");
  t.is((await api.call('GET', `/v1/coffres/${coffre.id}/archive?item_ids=${foreign.id}`, { key: key() })).status, 404);
  const malformed = await visit('POST', `/v1/coffre-access/${reader.token}/archive-link`, { item_ids: ['x'] });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.param, 'item_ids.0');
  const pending = await ok(visit('POST', `/v1/coffre-access/${reader.token}/archive-link`), 200);
  await ok(call('DELETE', `/v1/coffres/${coffre.id}/members/${reader.id}`), 200);
  const revoked = await fetchBytes(pending.body.archive_url);
  t.is(revoked.status, 403);
});

test("a member's upload retried with its Idempotency-Key gets the same item back, not a second one", async (t) => {
  const coffre = await newCoffre({ name: 'Retries' });
  const uploader = await invite(coffre.id, 'upload');
  const other = await invite(coffre.id, 'upload');
  const declare = (token: string, body: unknown) =>
    api.call('POST', `/v1/coffre-access/${token}/items`, { body, headers: { 'idempotency-key': 'member-retry-1' } });
  const body = { name: 'scan.pdf', size: 1000 };

  const first = await declare(uploader.token, body);
  t.is(first.status, 201, first.text);
  const replay = await declare(uploader.token, body);
  t.is(replay.status, 201);
  t.is(replay.headers.get('x-service-idempotent-replay'), 'true');
  t.is(replay.body.item.id, first.body.item.id);
  t.deepEqual(replay.body.upload_url, first.body.upload_url);
  const changed = await declare(uploader.token, { name: 'other.pdf', size: 5 });
  t.is(changed.status, 409);
  t.is(changed.body.error.code, 'idempotency_conflict');
  // Another member's link is another namespace; a link that does not verify is refused as before.
  const theirs = await declare(other.token, body);
  t.is(theirs.status, 201, theirs.text);
  t.not(theirs.body.item.id, first.body.item.id);
  t.is((await declare(`${uploader.token}x`, body)).status, 404);

  const items = await ok(call('GET', `/v1/coffres/${coffre.id}/items`), 200);
  t.is(items.body.data.length, 2);
  const stored = await api.services.db.anyFirst(sql.unsafe`
    SELECT response_sealed FROM idempotency_records WHERE coffre_member_id = ${uploader.id}`);
  t.is(stored.length, 1);
  t.false(String(stored[0]).includes(first.body.upload_url.url), 'the upload URL is stored sealed');
});

test('revoking or downgrading a member refuses the upload URL they already hold, at once', async (t) => {
  const coffre = await newCoffre();
  const bytes = content(4096, MARKER);
  for (const [how, change, reason] of [
    ['revoked', (id: string) => call('DELETE', `/v1/coffres/${coffre.id}/members/${id}`), 'revoked'],
    [
      'downgraded',
      (id: string) => call('PATCH', `/v1/coffres/${coffre.id}/members/${id}`, { access: 'download' }),
      'access',
    ],
  ] as const) {
    const member = await invite(coffre.id, 'upload');
    const declared = await ok(
      visit('POST', `/v1/coffre-access/${member.token}/items`, { name: `${how}.bin`, size: bytes.length }),
      201,
    );
    const url = declared.body.upload_url.url;
    t.is((await fetch(url, { method: 'HEAD' })).status, 200, `${how}: the URL works before the change`);
    await ok(change(member.id), 200);
    const refused = await put(url, bytes);
    t.is(refused.status, 403, `${how}: ${JSON.stringify(refused.body)}`);
    t.is(refused.body.error.code, 'forbidden');
    t.is(refused.body.error.reason, reason);
    t.is((await fetch(url, { method: 'HEAD' })).status, 403, `${how}: HEAD too`);
    const item = await ok(call('GET', `/v1/coffres/${coffre.id}/items/${declared.body.item.id}`), 200);
    t.is(item.body.status, 'uploading', `${how}: nothing was stored`);
  }
});

test('an item a member finishes uploading after losing access never becomes visible to other members', async (t) => {
  const coffre = await newCoffre();
  const uploader = await invite(coffre.id, 'upload');
  const reader = await invite(coffre.id, 'download');
  const bytes = content(64 * 1024, MARKER);
  const declared = await ok(
    visit('POST', `/v1/coffre-access/${uploader.token}/items`, { name: 'late.bin', size: bytes.length }),
    201,
  );
  const itemId = declared.body.item.id;
  // One streamed request, under way when the member is revoked: it was let in, and it completes.
  const url = new URL(declared.body.upload_url.url);
  const answer = new Promise<number>((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) },
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.write(bytes.subarray(0, bytes.length - 1));
    setTimeout(async () => {
      try {
        await ok(call('DELETE', `/v1/coffres/${coffre.id}/members/${uploader.id}`), 200);
        request.end(bytes.subarray(bytes.length - 1));
      } catch (error) {
        reject(error);
      }
    }, 500);
  });
  t.is(await answer, 200, 'the request that was under way stores its bytes');

  // Checked again at completion: shredded, never available, never listed to others.
  const gone = await eventually(async () => {
    const item = await call('GET', `/v1/coffres/${coffre.id}/items/${itemId}`);
    return item.status === 410 ? item : undefined;
  }, 30_000);
  t.is(gone.body.error.status, 'deleted');
  const listed = await ok(visit('GET', `/v1/coffre-access/${reader.token}/items`), 200);
  t.false(listed.body.data.some((item: { id: string }) => item.id === itemId));
  const [row] = await api.services.db.any(sql.unsafe`
    SELECT status, data_key_wrapped FROM coffre_items WHERE coffre_id = ${coffre.id}`);
  t.deepEqual(row, { status: 'deleted', data_key_wrapped: null });
  const log = await ok(call('GET', `/v1/coffres/${coffre.id}/access-log?limit=100`), 200);
  t.false(
    log.body.data.some((entry: { action: string }) => entry.action === 'uploaded'),
    'it is not logged as uploaded',
  );
});
