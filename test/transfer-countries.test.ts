import test from 'ava';
import { z } from 'zod';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, fetchBytes, put, waitForTransfer } from './helpers/transfers.ts';

// Transfers restricted to countries (docs/transfers.md, "Countries"): a download from elsewhere, or
// from an address whose country is unknown, is refused before anything is counted or served, and
// records `transfer.geo_blocked`; downloads carry their country, which rules' `country_code` matches.
// The API trusts one proxy hop, so X-Forwarded-For is the client address it sees.

const US = '8.8.8.8';
const GB = '81.2.69.142';
const PRIVATE = '10.1.2.3';

let api: TestApi;
test.before(async () => {
  api = await startApi({ TRUST_PROXY_HOPS: '1' });
});
test.after.always(() => api.close());

const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function activeTransfer(ws: TestWorkspace, body: Record<string, unknown>, bytes = content(2048)) {
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.bin', size: bytes.length }], ...body });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  return { ...created, bytes };
}

async function eventsOf(transferId: string, type: string) {
  return api.services.db.any(sql.type(z.object({ data: z.record(z.string(), z.unknown()) }))`
    SELECT data FROM events WHERE type = ${type} AND (data -> 'transfer' ->> 'id') = ${transferId}
    ORDER BY created_at, id`);
}

async function rule(ws: TestWorkspace, body: Record<string, unknown>) {
  const created = await api.call('POST', '/v1/rules', { key: ws.keys.live, body: { name: 'rule', ...body } });
  if (created.status !== 201) throw new Error(`rule: ${created.status} ${created.text}`);
  return created.body as { id: string };
}

test('allowed_countries is validated, normalised to upper case, shown and not leaked to other tenants', async (t) => {
  const ws = await api.workspace('Countries validation');
  const files = [{ name: 'a.txt', size: 1 }];
  for (const bad of [['XX'], ['USA'], ['u'], [], 'US', [1], ['ZZ']]) {
    const refused = await api.call('POST', '/v1/transfers', {
      key: ws.keys.live,
      body: { files, allowed_countries: bad },
    });
    t.is(refused.status, 400, JSON.stringify(bad));
    t.is(refused.body.error.code, 'validation_error');
    t.regex(refused.body.error.param ?? '', /^allowed_countries/);
  }
  const created = await createTransfer(api, ws.keys.live, { files, allowed_countries: ['fr', 'US', 'fr'] });
  const shown = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.deepEqual(shown.body.allowed_countries, ['FR', 'US']);
  const open = await createTransfer(api, ws.keys.live, { files });
  t.is(
    (await api.call('GET', `/v1/transfers/${open.transfer.id}`, { key: ws.keys.live })).body.allowed_countries,
    null,
  );

  const other = await api.workspace('Countries other');
  t.is((await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: other.keys.live })).status, 404);
  t.is((await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.test })).status, 404);

  // PATCH changes the list, with the same rules; another tenant's keys reach nothing.
  const path = `/v1/transfers/${created.transfer.id}`;
  for (const key of [other.keys.live, ws.keys.test]) {
    const refused = await api.call('PATCH', path, { key, body: { allowed_countries: ['GB'] } });
    t.is(refused.status, 404);
  }
  t.deepEqual((await api.call('GET', path, { key: ws.keys.live })).body.allowed_countries, ['FR', 'US']);
  const empty = await api.call('PATCH', path, { key: ws.keys.live, body: {} });
  t.is(empty.status, 400);
  t.is(empty.body.error.code, 'validation_error');
  const bad = await api.call('PATCH', path, { key: ws.keys.live, body: { allowed_countries: ['EU'] } });
  t.is(bad.status, 400);
  const changed = await api.call('PATCH', path, { key: ws.keys.live, body: { allowed_countries: ['gb'] } });
  t.is(changed.status, 200, changed.text);
  t.deepEqual(changed.body.allowed_countries, ['GB']);
  const lifted = await api.call('PATCH', path, { key: ws.keys.live, body: { allowed_countries: null } });
  t.is(lifted.body.allowed_countries, null);
});

test('a restriction added after the links were issued refuses them; lifting it lets downloads through', async (t) => {
  const ws = await api.workspace('Countries patch');
  const { transfer, bytes } = await activeTransfer(ws, {});
  const issued = await api.call('POST', `/v1/shares/${transfer.short_code}/download-links`, {
    body: {},
    headers: from(GB),
  });
  t.is(issued.status, 200, issued.text);
  const patched = await api.call('PATCH', `/v1/transfers/${transfer.id}`, {
    key: ws.keys.live,
    body: { allowed_countries: ['US'] },
  });
  t.is(patched.status, 200, patched.text);
  const url = issued.body.files[0].download_url as string;
  t.is((await fetchBytes(url, from(GB))).status, 403);
  await api.call('PATCH', `/v1/transfers/${transfer.id}`, { key: ws.keys.live, body: { allowed_countries: null } });
  const file = await fetchBytes(url, from(GB));
  t.is(file.status, 200);
  t.true(file.bytes.equals(bytes));
  const audit = await api.call('GET', '/v1/audit?limit=50', { key: ws.keys.live });
  t.true(audit.body.data.some((e: { action: string }) => e.action === 'transfer.update'));
});

test('a restricted transfer downloads from an allowed country; elsewhere or unknown it is refused and recorded', async (t) => {
  const ws = await api.workspace('Countries download');
  const tagged = await rule(ws, {
    trigger_event: 'transfer.geo_blocked',
    action_type: 'tag_transfer',
    action_config: { tag: 'geo-blocked' },
  });
  const { transfer, bytes } = await activeTransfer(ws, { allowed_countries: ['US'] });
  const code = transfer.short_code;

  // From another country, on every path: 403 forbidden, reason geo_blocked, nothing counted.
  const links = await api.call('POST', `/v1/shares/${code}/download-links`, { body: {}, headers: from(GB) });
  t.is(links.status, 403, links.text);
  t.like(links.body.error, { code: 'forbidden', reason: 'geo_blocked', country_code: 'GB' });
  const archive = await api.call('POST', `/v1/shares/${code}/archive-link`, { body: {}, headers: from(GB) });
  t.is(archive.status, 403, archive.text);
  t.is(archive.body.error.reason, 'geo_blocked');
  // From an address with no known country (private): refused too.
  const unknown = await api.call('POST', `/v1/shares/${code}/download-links`, { body: {}, headers: from(PRIVATE) });
  t.is(unknown.status, 403, unknown.text);
  t.like(unknown.body.error, { reason: 'geo_blocked', country_code: null });
  t.is((await api.call('GET', `/v1/transfers/${transfer.id}`, { key: ws.keys.live })).body.total_downloads, 0);

  // From the allowed country: the bytes, and the download carries its country.
  const allowed = await api.call('POST', `/v1/shares/${code}/download-links`, { body: {}, headers: from(US) });
  t.is(allowed.status, 200, allowed.text);
  const url = allowed.body.files[0].download_url as string;
  // The file link itself is a download path: handed to someone elsewhere, it is refused.
  const elsewhere = await fetchBytes(url, from(GB));
  t.is(elsewhere.status, 403);
  t.is(JSON.parse(elsewhere.bytes.toString()).error.reason, 'geo_blocked');
  const file = await fetchBytes(url, from(US));
  t.is(file.status, 200);
  t.true(file.bytes.equals(bytes));

  const downloaded = await eventsOf(transfer.id, 'transfer.downloaded');
  t.is(downloaded.length, 1);
  t.is(downloaded[0]?.data.country_code, 'US');
  t.is((await eventsOf(transfer.id, 'transfer.first_download'))[0]?.data.country_code, 'US');

  const blocked = await eventsOf(transfer.id, 'transfer.geo_blocked');
  t.deepEqual(
    blocked.map((e) => [e.data.country_code, e.data.path]),
    [
      ['GB', 'download_links'],
      ['GB', 'archive_link'],
      [null, 'download_links'],
      ['GB', 'file'],
    ],
  );
  // A rule on transfer.geo_blocked runs.
  await eventually(async () => {
    const tr = (await api.call('GET', `/v1/transfers/${transfer.id}`, { key: ws.keys.live })).body;
    return tr.tags.includes('geo-blocked') ? true : undefined;
  }, 30_000);
  const executions = await api.call('GET', `/v1/rules/${tagged.id}/executions`, { key: ws.keys.live });
  t.true(executions.body.data.length >= 1);
});

test('an unrestricted transfer downloads from anywhere, unknown addresses included', async (t) => {
  const ws = await api.workspace('Countries open');
  const { transfer } = await activeTransfer(ws, {});
  for (const ip of [GB, PRIVATE]) {
    const links = await api.call('POST', `/v1/shares/${transfer.short_code}/download-links`, {
      body: {},
      headers: from(ip),
    });
    t.is(links.status, 200, links.text);
  }
  t.deepEqual(
    (await eventsOf(transfer.id, 'transfer.downloaded')).map((e) => e.data.country_code),
    ['GB', null],
  );
  t.is((await eventsOf(transfer.id, 'transfer.geo_blocked')).length, 0);
});

test('a rule with country_code runs on downloads from that country only', async (t) => {
  const ws = await api.workspace('Countries rule');
  await rule(ws, {
    trigger_event: 'transfer.downloaded',
    trigger_conditions: { country_code: 'gb' },
    action_type: 'tag_transfer',
    action_config: { tag: 'from-gb' },
  });
  const fromUs = await activeTransfer(ws, {});
  const fromGb = await activeTransfer(ws, {});
  t.is(
    (await api.call('POST', `/v1/shares/${fromUs.transfer.short_code}/download-links`, { body: {}, headers: from(US) }))
      .status,
    200,
  );
  t.is(
    (await api.call('POST', `/v1/shares/${fromGb.transfer.short_code}/download-links`, { body: {}, headers: from(GB) }))
      .status,
    200,
  );
  await eventually(async () => {
    const tr = (await api.call('GET', `/v1/transfers/${fromGb.transfer.id}`, { key: ws.keys.live })).body;
    return tr.tags.includes('from-gb') ? true : undefined;
  }, 30_000);
  // The GB download's rule has run; the US one, dispatched in the same passes, matched nothing.
  const us = (await api.call('GET', `/v1/transfers/${fromUs.transfer.id}`, { key: ws.keys.live })).body;
  t.deepEqual(us.tags, []);
});

test("a shared collection's archive is refused, counting nothing, when one of its transfers is restricted elsewhere", async (t) => {
  const ws = await api.workspace('Countries collection');
  const [open, restricted] = await Promise.all([
    activeTransfer(ws, {}),
    activeTransfer(ws, { allowed_countries: ['US'] }),
  ]);
  const collection = await api.call('POST', '/v1/collections', {
    key: ws.keys.live,
    body: { title: 'Pack', transfer_ids: [open.transfer.id, restricted.transfer.id] },
  });
  t.is(collection.status, 201, collection.text);
  const code = new URL(collection.body.share_url).pathname.split('/').at(-1) ?? '';
  const refused = await api.call('POST', `/v1/shared-collections/${code}/archive-link`, {
    body: {},
    headers: from(GB),
  });
  t.is(refused.status, 403, refused.text);
  t.is(refused.body.error.reason, 'geo_blocked');
  for (const { transfer } of [open, restricted]) {
    t.is((await api.call('GET', `/v1/transfers/${transfer.id}`, { key: ws.keys.live })).body.total_downloads, 0);
  }
  const granted = await api.call('POST', `/v1/shared-collections/${code}/archive-link`, {
    body: {},
    headers: from(US),
  });
  t.is(granted.status, 200, granted.text);
  const handedOn = await fetchBytes(granted.body.archive_url, from(GB));
  t.is(handedOn.status, 403);
  const zip = await fetchBytes(granted.body.archive_url, from(US));
  t.is(zip.status, 200);
  t.deepEqual(
    (await eventsOf(restricted.transfer.id, 'transfer.geo_blocked')).map((e) => e.data.path),
    ['archive_link', 'archive'],
  );
});

test("the share page's form and a recipient's personal link are refused the same way, and say so", async (t) => {
  const ws = await api.workspace('Countries page');
  const { transfer } = await activeTransfer(ws, { allowed_countries: ['US'], recipients: ['reader@example.com'] });
  const shown = (await api.call('GET', `/v1/transfers/${transfer.id}`, { key: ws.keys.live })).body;
  const fileId = shown.files[0].id as string;

  const page = await fetch(`${api.url}/t/${transfer.short_code}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...from(GB) },
    body: new URLSearchParams({ file_id: fileId }),
    redirect: 'manual',
  });
  t.is(page.status, 403);
  t.regex(await page.text(), /cannot be downloaded from your country \(GB\)/);

  const personalCode = new URL(shown.recipients[0].share_url).pathname.split('/').at(-1) ?? '';
  const personal = await api.call('POST', `/v1/shares/${personalCode}/download-links`, { body: {}, headers: from(GB) });
  t.is(personal.status, 403, personal.text);
  t.is(personal.body.error.reason, 'geo_blocked');

  const blocked = await eventsOf(transfer.id, 'transfer.geo_blocked');
  t.deepEqual(
    blocked.map((e) => [e.data.path, (e.data.recipient as { email?: string } | undefined)?.email ?? null]),
    [
      ['share_page', null],
      ['download_links', 'reader@example.com'],
    ],
  );
  t.is((await api.call('GET', `/v1/transfers/${transfer.id}`, { key: ws.keys.live })).body.total_downloads, 0);
});
