import test from 'ava';
import { z } from 'zod';
import { SPAN_HOURS } from '../lib/db/queries/analytics.ts';
import { sql } from '../lib/db/sql.ts';
import { countryOf } from '../lib/net/country.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { createTransfer } from './helpers/transfers.ts';

// The top transfers and the countries over a hundred days of downloads (docs/analytics.md,
// "Design"): whole hours come from spans of 1 hour to 64 days (migration 0039), the minutes at the
// edges from the raw rows. For windows of every alignment and length, the API's answers must be
// those of a plain count of the raw rows; and when a transfer goes (the sandbox purge deletes it),
// its counts and the addresses only it was downloaded from go with it.

const DAY = 86_400_000;
const ADDRESSES = ['8.8.8.8', '81.2.69.142', '81.2.69.160', '2001:4860:4860::8888', null] as const;
const ONLY_FOURTH = '81.2.69.192';

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
let ids: string[];
let now: number;

/** `count` downloads of `transfer`, the i-th from `from(i)` at `at(i)`: history the API cannot back-date. */
async function history(transfer: string, count: number, at: (i: number) => number, from: (i: number) => string | null) {
  const indices = Array.from({ length: count }, (_, i) => i);
  await api.services.db.query(sql.unsafe`
    INSERT INTO transfer_downloads (transfer_id, ip_address, created_at)
    SELECT ${transfer}, * FROM unnest(
      ${sql.array(indices.map(from), 'text')},
      ${sql.array(
        indices.map((i) => new Date(at(i)).toISOString()),
        'timestamptz',
      )})`);
}

test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Analytics spans');
  other = await api.workspace('Analytics spans elsewhere');
  ids = [];
  for (let i = 0; i < 4; i++) {
    const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.bin', size: 10 }] });
    ids.push(created.transfer.id);
  }
  now = Date.now();
  // 100 days of downloads at instants that fall on every hour and minute, two statements per
  // transfer (the triggers group each statement's rows), and the fourth transfer's only from one
  // address no other transfer was downloaded from.
  for (const [n, id] of ids.slice(0, 3).entries()) {
    await history(
      id,
      300 + n * 50,
      (i) => now - (i * 7.77 + n) * 3_600_000,
      (i) => ADDRESSES[(i * (n + 1)) % 5] ?? null,
    );
    await history(
      id,
      40,
      (i) => now - i * 59_000 * (n + 1),
      (i) => ADDRESSES[(i + n) % 4] ?? null,
    );
  }
  await history(
    ids[3] ?? '',
    25,
    (i) => now - i * 2.5 * DAY,
    () => ONLY_FOURTH,
  );
  // The same in another workspace: none of it may show.
  const elsewhere = await createTransfer(api, other.keys.live, { files: [{ name: 'b.bin', size: 10 }] });
  await history(
    elsewhere.transfer.id,
    200,
    (i) => now - i * 9 * 3_600_000,
    (i) => ADDRESSES[i % 5] ?? null,
  );
});
test.after.always(() => api.close());

type Window = { since: string; until: string };

async function recountTopTransfers(window: Window) {
  return api.services.db.any(sql.unsafe`
    SELECT t.id, count(*)::int AS downloads FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id
    WHERE t.workspace_id = ${ws.workspace_id} AND t.environment = 'live'
      AND d.created_at >= ${window.since} AND d.created_at < ${window.until}
    GROUP BY t.id ORDER BY downloads DESC, t.id`);
}

type CountryCount = { country_code: string | null; downloads: number; visitors: number };
/** Countries in one order whatever the ties (the API orders by downloads). */
const byCode = (rows: CountryCount[]) =>
  [...rows].sort((a, b) => String(a.country_code).localeCompare(String(b.country_code)));

async function recountCountries(window: Window) {
  const rows = (await api.services.db.any(sql.unsafe`
    SELECT d.ip_address, count(*)::int AS n FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id
    WHERE t.workspace_id = ${ws.workspace_id} AND t.environment = 'live'
      AND d.created_at >= ${window.since} AND d.created_at < ${window.until}
    GROUP BY d.ip_address`)) as Array<{ ip_address: string | null; n: number }>;
  const countries = new Map<string | null, { downloads: number; visitors: number }>();
  for (const row of rows) {
    const entry = countries.get(countryOf(row.ip_address)) ?? { downloads: 0, visitors: 0 };
    entry.downloads += row.n;
    entry.visitors += row.ip_address === null ? 0 : 1;
    countries.set(countryOf(row.ip_address), entry);
  }
  return byCode([...countries].map(([country_code, counts]) => ({ country_code, ...counts })));
}

async function assertLikeRecount(t: import('ava').ExecutionContext, window: Window) {
  const query = `since=${window.since}&until=${window.until}`;
  const top = await api.call('GET', `/v1/analytics/top-transfers?${query}&limit=100`, { key: ws.keys.live });
  t.is(top.status, 200, top.text);
  t.deepEqual(
    top.body.transfers.map((r: { id: string; downloads: number }) => ({ id: r.id, downloads: r.downloads })),
    await recountTopTransfers(window),
    `top transfers over ${query}`,
  );
  const geo = await api.call('GET', `/v1/analytics/geo?${query}`, { key: ws.keys.live });
  t.is(geo.status, 200, geo.text);
  t.deepEqual(byCode(geo.body.countries), await recountCountries(window), `countries over ${query}`);
}

const iso = (ms: number) => new Date(ms).toISOString();
const midnight = (ms: number) => Math.floor(ms / DAY) * DAY;

test.serial('the API splits windows into the span lengths the database counts in', async (t) => {
  const lengths = await api.services.db.oneFirst(
    sql.type(
      z.object({ lengths: z.array(z.number()) }),
    )`SELECT array_agg(l ORDER BY l) AS lengths FROM analytics_span_lengths() l`,
  );
  t.deepEqual(lengths, [...SPAN_HOURS]);
});

test.serial('every window, aligned on days or not, short or long, counts what the raw rows count', async (t) => {
  const windows: Window[] = [
    { since: iso(now - 30 * DAY), until: iso(now + 1000) }, // the default's shape: unaligned, ending now
    { since: iso(midnight(now) - 64 * DAY), until: iso(midnight(now)) }, // one aligned 64-day span at most
    { since: iso(midnight(now) - 17 * DAY + 3_600_000), until: iso(midnight(now) - 2 * DAY - 60_000) },
    { since: iso(now - 101 * DAY), until: iso(now + DAY) }, // everything
    { since: iso(now - 3 * 3_600_000), until: iso(now - 3_600_000) }, // within a day: raw rows only
    { since: iso(midnight(now) - DAY), until: iso(midnight(now)) }, // exactly one day: one span only
    { since: iso(now - 200 * DAY), until: iso(now - 120 * DAY) }, // before everything: nothing
  ];
  for (const window of windows) await assertLikeRecount(t, window);
  const all = await recountTopTransfers(windows[3] as Window);
  t.is(all.length, 4, 'the window of everything sees the four transfers');
});

test.serial(
  "a deleted transfer's counts go, and an address only it was downloaded from leaves the rollups",
  async (t) => {
    const gone = ids[3] ?? '';
    const spansOf = async (address: string) =>
      api.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int FROM analytics_address_spans
      WHERE workspace_id = ${ws.workspace_id} AND ip_address = ${address}`);
    t.true((await spansOf(ONLY_FOURTH)) > 0);
    // As the sandbox purge deletes an old transfer (lib/retention/purge.ts).
    await api.services.db.query(sql.unsafe`DELETE FROM transfers WHERE id = ${gone}`);
    t.is(await spansOf(ONLY_FOURTH), 0, 'no span keeps the address of downloads that are gone');
    t.is(
      await api.services.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM analytics_transfer_spans WHERE transfer_id = ${gone}`),
      0,
    );
    await assertLikeRecount(t, { since: iso(now - 101 * DAY), until: iso(now + DAY) });
    await assertLikeRecount(t, { since: iso(now - 30 * DAY), until: iso(now + 1000) });
  },
);
