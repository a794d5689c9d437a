import { rm } from 'node:fs/promises';
import test from 'ava';
import { sql } from '../lib/db/sql.ts';
import { cli } from './cli/cli-harness.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { content, createTransfer, fetchBytes, put, waitForTransfer } from './helpers/transfers.ts';

// Analytics (docs/analytics.md) through the real API: transfers created, uploaded and downloaded
// from addresses in two countries, then every route's numbers asserted exactly, for the owner's
// workspace and environment only.

const US = '8.8.8.8';
const GB = '81.2.69.142';

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
const seen: {
  first: { id: string; short_code: string };
  second: { id: string; short_code: string };
  bytes: number;
  recipients: [string, string];
} = {} as never;

async function activeTransfer(key: string, body: Record<string, unknown>, files: Buffer[]) {
  const created = await createTransfer(api, key, {
    ...body,
    files: files.map((bytes, i) => ({ name: `f${i}.bin`, size: bytes.length })),
  });
  for (const [i, bytes] of files.entries()) await put(created.upload_urls[i]?.url ?? '', bytes);
  await waitForTransfer(api, key, created.transfer.id, (tr) => tr.status === 'active', 120_000);
  return created.transfer;
}

/** One counted download (a download-links call) of `code` from the address `from`. */
async function downloadFrom(code: string, from: string) {
  const response = await api.call('POST', `/v1/shares/${code}/download-links`, {
    body: {},
    headers: { 'x-forwarded-for': from },
  });
  if (response.status !== 200) throw new Error(`${response.status} ${response.text}`);
  return response.body.files as Array<{ download_url: string }>;
}

test.before(async () => {
  api = await startApi({ TRUST_PROXY_HOPS: '1' });
  ws = await api.workspace('Analytics');
  other = await api.workspace('Analytics elsewhere');
  const key = ws.keys.live;
  const recipients: [string, string] = [uniqueAddress('ana'), uniqueAddress('ben')];
  const [a, b, c] = [content(1000), content(2345), content(77)];
  const first = await activeTransfer(key, { transfer_title: 'Two files', recipients }, [a, b]);
  const second = await activeTransfer(key, {}, [c]);
  // Created, never uploaded: the funnel's first step only.
  await createTransfer(api, key, { files: [{ name: 'never.bin', size: 10 }] });
  Object.assign(seen, { first, second, bytes: a.length + b.length + c.length, recipients });

  await downloadFrom(first.short_code, US);
  await downloadFrom(first.short_code, US);
  await downloadFrom(first.short_code, GB);
  await downloadFrom(second.short_code, US);
  // Ana's personal link, every file fetched whole: her download completes, and the transfer's.
  const listed = await api.call('GET', `/v1/transfers/${first.id}/recipients`, { key });
  const ana = (listed.body.data as Array<{ email: string; share_url: string }>).find((r) => r.email === recipients[0]);
  const code = new URL(ana?.share_url ?? '').pathname.split('/').pop() ?? '';
  for (const file of await downloadFrom(code, GB)) await fetchBytes(file.download_url);
  // Noise: another workspace, and the test environment of this one.
  const elsewhere = await activeTransfer(other.keys.live, {}, [content(500)]);
  await downloadFrom(elsewhere.short_code, GB);
  const testMode = await activeTransfer(ws.keys.test, {}, [content(600)]);
  await downloadFrom(testMode.short_code, US);
});
test.after.always(() => api.close());

const get = (path: string, key = ws.keys.live) => api.call('GET', path, { key });

async function firstDownloadWaits(): Promise<number[]> {
  const rows = await api.services.db.any(sql.unsafe`
    SELECT extract(epoch FROM min(d.created_at) - t.created_at)::float8 AS wait
    FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id
    WHERE t.id IN (${seen.first.id}, ${seen.second.id}) GROUP BY t.id ORDER BY 1`);
  return rows.map((r) => Number((r as { wait: number }).wait));
}

test('summary: totals over the last 30 days and each day', async (t) => {
  const response = await get('/v1/analytics');
  t.is(response.status, 200, response.text);
  const waits = await firstDownloadWaits();
  t.like(response.body, {
    object: 'analytics_summary',
    tz: 'UTC',
    transfers_created: 3,
    bytes_sent: seen.bytes,
    downloads: 5,
    unique_recipients: 2,
    completion_rate: 2 / 3,
  });
  t.true(Math.abs(response.body.median_seconds_to_first_download - ((waits[0] ?? 0) + (waits[1] ?? 0)) / 2) < 0.002);
  const since = new Date(response.body.since).getTime();
  t.is(new Date(response.body.until).getTime() - since, 30 * 24 * 3600 * 1000);
  const days = response.body.days as Array<{ date: string; transfers_created: number; downloads: number }>;
  t.true(days.length === 30 || days.length === 31, String(days.length));
  t.is(
    days.reduce((sum, day) => sum + day.downloads, 0),
    5,
  );
  t.is(days.at(-1)?.date, new Date().toISOString().slice(0, 10));
  t.is(days.at(-1)?.transfers_created, 3);
});

test('geo: downloads and distinct addresses by country', async (t) => {
  const response = await get('/v1/analytics/geo');
  t.is(response.status, 200, response.text);
  t.deepEqual(response.body.countries, [
    { country_code: 'US', downloads: 3, visitors: 1 },
    { country_code: 'GB', downloads: 2, visitors: 1 },
  ]);
});

test('funnel: created, uploaded, downloaded once, every file downloaded', async (t) => {
  const response = await get('/v1/analytics/funnel');
  t.is(response.status, 200, response.text);
  t.deepEqual(response.body.steps, [
    { step: 'created', count: 3, conversion: 1, overall: 1 },
    { step: 'uploaded', count: 2, conversion: 2 / 3, overall: 2 / 3 },
    { step: 'first_download', count: 2, conversion: 1, overall: 2 / 3 },
    { step: 'all_files_downloaded', count: 1, conversion: 1 / 2, overall: 1 / 3 },
  ]);
});

test('heatmap: downloads by weekday and hour in the zone asked for', async (t) => {
  const zone = 'Asia/Kathmandu'; // UTC+05:45: a quarter-hour offset
  const response = await get(`/v1/analytics/heatmap?tz=${encodeURIComponent(zone)}`);
  t.is(response.status, 200, response.text);
  t.is(response.body.tz, zone);
  const stamps = await api.services.db.anyFirst(sql.unsafe`
    SELECT d.created_at FROM transfer_downloads d JOIN transfers t ON t.id = d.transfer_id
    WHERE t.workspace_id = ${ws.workspace_id} AND t.environment = 'live'`);
  const expected = new Map<string, number>();
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'short',
    hour: '2-digit',
    hourCycle: 'h23',
  });
  const weekdays = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  for (const stamp of stamps) {
    const p = parts.formatToParts(new Date(stamp as number));
    const cell = `${weekdays.indexOf(p.find((x) => x.type === 'weekday')?.value ?? '') + 1}/${Number(p.find((x) => x.type === 'hour')?.value)}`;
    expected.set(cell, (expected.get(cell) ?? 0) + 1);
  }
  const cells = response.body.cells as Array<{ weekday: number; hour: number; downloads: number }>;
  t.deepEqual(new Map(cells.map((c) => [`${c.weekday}/${c.hour}`, c.downloads])), expected);
  t.is(
    cells.reduce((sum, c) => sum + c.downloads, 0),
    5,
  );
});

test('top transfers and top recipients, by downloads, with a limit', async (t) => {
  const top = await get('/v1/analytics/top-transfers');
  t.is(top.status, 200, top.text);
  t.deepEqual(
    top.body.transfers.map((r: { id: string; downloads: number; transfer_title: string | null }) => [
      r.id,
      r.downloads,
      r.transfer_title,
    ]),
    [
      [seen.first.id, 4, 'Two files'],
      [seen.second.id, 1, null],
    ],
  );
  const one = await get('/v1/analytics/top-transfers?limit=1');
  t.is(one.body.transfers.length, 1);
  t.is((await get('/v1/analytics/top-transfers?limit=100000')).status, 200, 'a limit is clamped, not refused');

  const recipients = await get('/v1/analytics/top-recipients');
  t.is(recipients.status, 200, recipients.text);
  t.deepEqual(recipients.body.recipients, [
    { email: seen.recipients[0], transfers: 1, downloads: 1 },
    { email: seen.recipients[1], transfers: 1, downloads: 0 },
  ]);
});

test("another workspace's keys and the other environment's see none of these numbers", async (t) => {
  for (const key of [other.keys.live, ws.keys.test]) {
    const summary = await get('/v1/analytics', key);
    t.is(summary.status, 200);
    t.like(summary.body, { transfers_created: 1, downloads: 1, unique_recipients: 0 });
    t.is((await get('/v1/analytics/top-transfers', key)).body.transfers.length, 1);
    t.is((await get('/v1/analytics/top-recipients', key)).body.recipients.length, 0);
    t.is((await get('/v1/analytics/geo', key)).body.countries.length, 1);
  }
  t.deepEqual((await get('/v1/analytics/geo', other.keys.live)).body.countries, [
    { country_code: 'GB', downloads: 1, visitors: 1 },
  ]);
});

test('the scope analytics:read is required', async (t) => {
  const without = await ws.mintKey({ name: 'no analytics', key_type: 'restricted', scopes: ['transfers:read'] });
  const refused = await get('/v1/analytics/funnel', without.key);
  t.is(refused.status, 403, refused.text);
  t.is(refused.body.error.code, 'scope_missing');
  const reader = await ws.mintKey({ name: 'analyst', key_type: 'restricted', scopes: ['analytics:read'] });
  t.is((await get('/v1/analytics/funnel', reader.key)).body.steps[0].count, 3);
});

test('bad windows and zones get validation errors, never a 500', async (t) => {
  const cases: Array<[string, string]> = [
    ['/v1/analytics?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
    ['/v1/analytics/geo?since=2026-01-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
    ['/v1/analytics/funnel?since=2024-01-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
    ['/v1/analytics/heatmap?tz=Mars%2FOlympus', 'tz'],
    ['/v1/analytics/heatmap?since=yesterday', 'since'],
    ['/v1/analytics/top-transfers?limit=many', 'limit'],
  ];
  for (const [path, param] of cases) {
    const response = await get(path);
    t.is(response.status, 400, `${path}: ${response.text}`);
    t.is(response.body.error.code, 'validation_error', path);
    t.is(response.body.error.param, param, path);
  }
});

test('a window in the past sees nothing; a zone shifts the days', async (t) => {
  const empty = await get('/v1/analytics?since=2025-01-01T00:00:00Z&until=2025-01-03T00:00:00Z');
  t.like(empty.body, {
    transfers_created: 0,
    downloads: 0,
    completion_rate: null,
    median_seconds_to_first_download: null,
  });
  t.deepEqual(
    empty.body.days.map((d: { date: string }) => d.date),
    ['2025-01-01', '2025-01-02'],
  );
  const shifted = await get(
    '/v1/analytics?since=2025-01-01T00:00:00Z&until=2025-01-03T00:00:00Z&tz=America%2FNew_York',
  );
  t.deepEqual(
    shifted.body.days.map((d: { date: string }) => d.date),
    ['2024-12-31', '2025-01-01', '2025-01-02'],
  );
});

test("valise analytics prints readable tables, and the API's JSON with --json", async (t) => {
  const valise = await cli(api.url, ws.keys.live);
  try {
    const funnel = await valise.run(['analytics', 'funnel']);
    t.is(funnel.code, 0, funnel.stderr);
    t.regex(funnel.stdout, /STEP\s+TRANSFERS\s+FROM PREVIOUS\s+OF CREATED/);
    t.regex(funnel.stdout, /all_files_downloaded\s+1\s+50\.0%\s+33\.3%/);
    const summary = await valise.run(['analytics']);
    t.regex(summary.stdout, /Transfers created\s*:?\s+3/);
    t.regex(summary.stdout, /Completion rate\s*:?\s+66\.7%/);
    const geo = await valise.json(['analytics', 'geo', '--since', new Date(Date.now() - 86_400_000).toISOString()]);
    t.deepEqual(geo.countries, (await get('/v1/analytics/geo')).body.countries);
    const heatmap = await valise.run(['analytics', 'heatmap', '--tz', 'Europe/Paris']);
    t.regex(heatmap.stdout, /Downloads by weekday and hour \(Europe\/Paris\)/);
    const top = await valise.json(['analytics', 'top-transfers', '--limit', '1']);
    t.is(top.transfers[0].id, seen.first.id);
    const refused = await valise.run(['analytics', 'funnel', '--limit', '3']);
    t.is(refused.code, 1, 'usage error');
    const badZone = await valise.run(['analytics', 'heatmap', '--tz', 'Nowhere/Land']);
    t.is(badZone.code, 2, badZone.stderr);
  } finally {
    await rm(valise.home, { recursive: true, force: true });
  }
});

test('whole quarters and days come from the rollups, edges from the raw rows: the same numbers either way', async (t) => {
  // `until` an hour and a half ahead: the downloads above lie in whole quarters (and, past midnight
  // UTC, possibly whole days) of this window, counted from the rollups.
  const until = new Date(Date.now() + 90 * 60_000).toISOString();
  const since = new Date(Date.now() - 2 * 86_400_000).toISOString();
  const window = `since=${since}&until=${until}&tz=Asia%2FKathmandu`;
  const [edgeOnly, wide] = [await get('/v1/analytics?tz=Asia%2FKathmandu'), await get(`/v1/analytics?${window}`)];
  t.is(wide.body.downloads, 5);
  t.is(edgeOnly.body.downloads, 5);
  const sum = (days: Array<{ downloads: number }>) => days.reduce((n, d) => n + d.downloads, 0);
  t.is(sum(wide.body.days), 5);
  const heat = await get(`/v1/analytics/heatmap?${window}`);
  t.deepEqual(heat.body.cells, (await get('/v1/analytics/heatmap?tz=Asia%2FKathmandu')).body.cells);
  const top = await get(`/v1/analytics/top-transfers?${window}`);
  t.deepEqual(
    top.body.transfers.map((r: { downloads: number }) => r.downloads),
    [4, 1],
  );
  // A window holding whole UTC days: the transfer-day rollup.
  const days = `since=${new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z&until=${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`;
  t.deepEqual(
    (await get(`/v1/analytics/top-transfers?${days}`)).body.transfers.map((r: { downloads: number }) => r.downloads),
    [4, 1],
  );
  t.is((await get(`/v1/analytics?${days}`)).body.downloads, 5);
});
