import test from 'ava';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi } from './helpers/api.ts';
import { content, put } from './helpers/transfers.ts';

// Sandbox keys may create 25 transfers per rolling 24 hours (spec, Limits),
// however many requests race for the last places.

let api: TestApi;
test.before(async () => {
  // Writes well past the default per-minute quotas: the limits under test are the sandbox's.
  api = await startApi({ RATE_LIMIT_WRITE: '100000', RATE_LIMIT_PUBLIC: '100000' });
});
test.after.always(() => api.close());

test('40 parallel sandbox creates: exactly 25 are created, the other 15 get 429 rate_limited', async (t) => {
  const ws = await api.workspace('Sandbox quota race');
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      api.call('POST', '/v1/transfers', {
        key: ws.keys.sandbox,
        body: { files: [{ name: `race-${i}.bin`, size: 1 }] },
      }),
    ),
  );
  const statuses = responses.map((r) => r.status);
  t.is(statuses.filter((s) => s === 201).length, 25, `statuses: ${statuses.join(',')}`);
  const refused = responses.filter((r) => r.status !== 201);
  t.is(refused.length, 15);
  for (const response of refused) {
    t.is(response.status, 429, response.text);
    t.is(response.body.error.code, 'rate_limited');
    t.is(response.headers.get('retry-after'), '3600');
    t.is(response.body.error.request_id, response.headers.get('x-request-id'));
  }
  const listed = await api.call('GET', '/v1/transfers?limit=100', { key: ws.keys.sandbox });
  t.is(listed.body.data.length, 25, 'what exists is what was answered 201');
  t.false(listed.body.has_more);
});

// The same limits for the other families that hold files (lib/sandbox.ts; docs/coffres.md,
// docs/intakes.md, docs/collections.md, "Sandbox").

const MiB = 1024 * 1024;

/** GETs a download URL; answers the status and the error's code and reason, if any. */
async function download(url: string) {
  const response = await fetch(url);
  const text = await response.text();
  const error = response.status >= 400 && text ? JSON.parse(text).error : null;
  return { status: response.status, reason: error?.reason ?? null, code: error?.code ?? null };
}

test('sandbox vaults: 10 MiB an item, 10 items a vault, 25 items a day, 5 downloads an item', async (t) => {
  const ws = await api.workspace('Sandbox vaults');
  const key = ws.keys.sandbox;
  const call = (method: string, path: string, body?: unknown, k = key) =>
    api.call(method, path, { key: k, ...(body === undefined ? {} : { body }) });
  const vault = async () => (await call('POST', '/v1/coffres', { name: 'Sandbox room' })).body.id as string;
  const first = await vault();

  const big = await call('POST', `/v1/coffres/${first}/items`, { name: 'big.bin', size: 10 * MiB + 1 });
  t.is(big.status, 400, big.text);
  t.is(big.body.error.code, 'validation_error');
  t.is(big.body.error.param, 'size');
  // A member with upload access is held to the same.
  const member = await call('POST', `/v1/coffres/${first}/members`, { email: 'up@example.com', access: 'upload' });
  const token = new URL(member.body.invitation_url).pathname.split('/').at(-1);
  const bigByMember = await api.call('POST', `/v1/coffre-access/${token}/items`, {
    body: { name: 'big.bin', size: 10 * MiB + 1 },
  });
  t.is(bigByMember.status, 400, bigByMember.text);
  t.is(bigByMember.body.error.param, 'size');

  // One item uploaded and scanned, for the download cap; nine more fill the vault.
  const bytes = content(2048);
  const stored = await call('POST', `/v1/coffres/${first}/items`, { name: 'kept.bin', size: bytes.length });
  t.is(stored.status, 201, stored.text);
  t.is((await put(stored.body.upload_url.url, bytes)).status, 200);
  for (let i = 0; i < 8; i++) {
    t.is((await call('POST', `/v1/coffres/${first}/items`, { name: `f${i}.bin`, size: 10 })).status, 201);
  }
  t.is((await call('POST', `/v1/coffres/${first}/items`, { name: 'max.bin', size: 10 * MiB })).status, 201);
  const eleventh = await call('POST', `/v1/coffres/${first}/items`, { name: 'one-more.bin', size: 10 });
  t.is(eleventh.status, 400, eleventh.text);
  t.is(eleventh.body.error.code, 'validation_error');
  // Deleting one frees its place.
  const newest = (await call('GET', `/v1/coffres/${first}/items?limit=1`)).body.data[0].id;
  const freed = await call('DELETE', `/v1/coffres/${first}/items/${newest}`);
  t.is(freed.status, 200, freed.text);
  t.is((await call('POST', `/v1/coffres/${first}/items`, { name: 'again.bin', size: 10 })).status, 201);

  // 11 items so far today: 14 more across other vaults, then 429.
  let made = 11;
  while (made < 25) {
    const next = await vault();
    for (let i = 0; i < 7 && made < 25; i++, made++) {
      t.is((await call('POST', `/v1/coffres/${next}/items`, { name: `d${i}.bin`, size: 10 })).status, 201);
    }
  }
  const overQuota = await call('POST', `/v1/coffres/${await vault()}/items`, { name: 'late.bin', size: 10 });
  t.is(overQuota.status, 429, overQuota.text);
  t.is(overQuota.body.error.code, 'rate_limited');
  t.is(overQuota.headers.get('retry-after'), '3600');

  // Five downloads of an item, whoever takes them; the sixth is refused, a fresh link too.
  const available = await eventually(async () => {
    const item = await call('GET', `/v1/coffres/${first}/items/${stored.body.item.id}`);
    return item.body.status === 'available' ? item.body : undefined;
  }, 60_000);
  for (let i = 0; i < 5; i++) t.is((await download(available.download_url)).status, 200, `download ${i + 1}`);
  t.deepEqual(await download(available.download_url), { status: 403, code: 'forbidden', reason: 'limit_reached' });
  const fresh = await call('GET', `/v1/coffres/${first}/items/${stored.body.item.id}`);
  t.deepEqual(await download(fresh.body.download_url), { status: 403, code: 'forbidden', reason: 'limit_reached' });
  const archive = await fetch(`${api.url}/v1/coffres/${first}/archive`, {
    headers: { authorization: `Bearer ${key}` },
  });
  t.is(archive.status, 403, 'nor is it in an archive');

  // A live vault is not held to any of it.
  const live = (await call('POST', '/v1/coffres', { name: 'Live room' }, ws.keys.live)).body.id;
  for (let i = 0; i < 11; i++) {
    t.is(
      (await call('POST', `/v1/coffres/${live}/items`, { name: `l${i}.bin`, size: 10 * MiB + 1 }, ws.keys.live)).status,
      201,
    );
  }
});

test('sandbox intakes: 10 files of 10 MiB a submission, 25 submissions a day, 5 downloads a file', async (t) => {
  const ws = await api.workspace('Sandbox intakes');
  const key = ws.keys.sandbox;
  const call = (method: string, path: string, body?: unknown) => api.call(method, path, { key, body });

  for (const [limits, param] of [
    [{ max_files: 11 }, 'limits.max_files'],
    [{ max_bytes: 100 * 1024 ** 3 }, 'limits.max_bytes'],
    [{ max_bytes: 5 * 1024 ** 4 }, 'limits.max_bytes'],
  ] as const) {
    const refused = await call('POST', '/v1/intakes', { title: 'Too big', limits });
    t.is(refused.status, 400, `${JSON.stringify(limits)}: ${refused.text}`);
    t.is(refused.body.error.code, 'validation_error');
    t.is(refused.body.error.param, param);
  }
  const created = await call('POST', '/v1/intakes', { title: 'Sandbox inbox' });
  t.is(created.status, 201, created.text);
  t.like(created.body.limits, { max_files: 10, max_bytes: 100 * MiB });
  const patched = await call('PATCH', `/v1/intakes/${created.body.id}`, { limits: { max_bytes: 5 * 1024 ** 4 } });
  t.is(patched.status, 400, patched.text);
  t.is(patched.body.error.param, 'limits.max_bytes');
  const within = await call('PATCH', `/v1/intakes/${created.body.id}`, { limits: { max_files: 5 } });
  t.is(within.status, 200, within.text);

  const cip = created.body.publishable_key.key;
  const submit = (files: unknown[]) =>
    api.call('POST', `/v1/intakes/${created.body.id}/submissions`, { key: cip, body: { files } });
  const big = await submit([{ name: 'big.pdf', size: 10 * MiB + 1 }]);
  t.is(big.status, 400, big.text);
  t.is(big.body.error.param, 'files.0.size');
  // An intake given more before the cap existed still takes 10 files a submission.
  await api.services.db.query(sql.unsafe`UPDATE intakes SET max_files = 20 WHERE id = ${created.body.id}`);
  const eleven = await submit(Array.from({ length: 11 }, (_, i) => ({ name: `p${i}.pdf`, size: 1 })));
  t.is(eleven.status, 400, eleven.text);
  t.is(eleven.body.error.param, 'files');

  const bytes = content(3000);
  const first = await submit([{ name: 'scan.pdf', size: bytes.length }]);
  t.is(first.status, 201, first.text);
  t.is((await put(first.body.upload_urls[0].url, bytes)).status, 200);
  for (let i = 1; i < 25; i++) t.is((await submit([{ name: 'x.pdf', size: 10 }])).status, 201, `submission ${i + 1}`);
  const overQuota = await submit([{ name: 'late.pdf', size: 10 }]);
  t.is(overQuota.status, 429, overQuota.text);
  t.is(overQuota.body.error.code, 'rate_limited');
  t.is(overQuota.headers.get('retry-after'), '3600');

  const document = await eventually(async () => {
    const got = await call('GET', `/v1/intakes/${created.body.id}/documents/${first.body.document.id}`);
    return got.body.status === 'available' ? got.body : undefined;
  }, 60_000);
  const url = document.files[0].download_url;
  for (let i = 0; i < 5; i++) t.is((await download(url)).status, 200, `download ${i + 1}`);
  t.deepEqual(await download(url), { status: 403, code: 'forbidden', reason: 'limit_reached' });
});

test('sandbox collections: 10 transfers a collection, 25 collections a day', async (t) => {
  const ws = await api.workspace('Sandbox collections');
  const key = ws.keys.sandbox;
  const call = (method: string, path: string, body?: unknown) => api.call(method, path, { key, body });
  const ids: string[] = [];
  for (let i = 0; i < 11; i++) {
    const created = await call('POST', '/v1/transfers', { files: [{ name: `t${i}.bin`, size: 1 }] });
    t.is(created.status, 201, created.text);
    ids.push(created.body.transfer.id);
  }
  const tooMany = await call('POST', '/v1/collections', { title: 'Too many', transfer_ids: ids });
  t.is(tooMany.status, 400, tooMany.text);
  t.is(tooMany.body.error.code, 'validation_error');
  t.is(tooMany.body.error.param, 'transfer_ids');
  const full = await call('POST', '/v1/collections', { title: 'Ten', transfer_ids: ids.slice(0, 10) });
  t.is(full.status, 201, full.text);
  const added = await call('POST', `/v1/collections/${full.body.id}/transfers`, { transfer_ids: [ids[10]] });
  t.is(added.status, 400, added.text);
  t.is(added.body.error.param, 'transfer_ids');

  for (let i = 1; i < 25; i++) t.is((await call('POST', '/v1/collections', { title: `C${i}` })).status, 201);
  const overQuota = await call('POST', '/v1/collections', { title: 'One too many' });
  t.is(overQuota.status, 429, overQuota.text);
  t.is(overQuota.body.error.code, 'rate_limited');
  t.is(overQuota.headers.get('retry-after'), '3600');
});
