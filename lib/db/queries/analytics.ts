import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tenant } from '../../tenancy.ts';
import { sql } from '../sql.ts';

// Analytics read the rows Valise already keeps (transfers, their files, downloads and recipients),
// and, for the counts of downloads over time, the rollups that triggers on transfer_downloads keep
// in the same transaction as each download (migrations 0036 and 0039, docs/analytics.md, "Design"):
// whole quarters and hours from the rollups, the partial ones at the window's edges from the raw rows.
// Every query starts from the tenant's rows, filtered on workspace and environment; downloads,
// files and recipients are reached through the tenant's transfers.

/** A half-open range of time, [since, until), and the IANA zone days and hours are counted in. */
export type AnalyticsWindow = { since: Date; until: Date; timeZone: string };

const totalsRow = z.object({
  transfers_created: z.coerce.number().int(),
  bytes_sent: z.coerce.number().int(),
  downloads: z.coerce.number().int(),
  unique_recipients: z.coerce.number().int(),
  downloaded_transfers: z.coerce.number().int(),
  median_seconds_to_first_download: z.coerce.number().nullable(),
});

const dayRow = z.object({
  date: z.string(),
  transfers_created: z.coerce.number().int(),
  bytes_sent: z.coerce.number().int(),
  downloads: z.coerce.number().int(),
});

const addressRow = z.object({ ip_address: z.string().nullable(), downloads: z.coerce.number().int() });

const funnelRow = z.object({
  created: z.coerce.number().int(),
  uploaded: z.coerce.number().int(),
  first_download: z.coerce.number().int(),
  all_files_downloaded: z.coerce.number().int(),
});

const heatmapRow = z.object({
  weekday: z.coerce.number().int(),
  hour: z.coerce.number().int(),
  downloads: z.coerce.number().int(),
});

const topTransferRow = z.object({
  id: z.uuid(),
  short_code: z.string(),
  transfer_title: z.string().nullable(),
  created_at: z.date(),
  downloads: z.coerce.number().int(),
});

const topRecipientRow = z.object({
  email: z.string(),
  transfers: z.coerce.number().int(),
  downloads: z.coerce.number().int(),
});

const QUARTER_MS = 15 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

type Span = { from: Date; to: Date };

/**
 * The lengths in hours of the spans migration 0039 counts each download in (its
 * analytics_span_lengths(), which a test compares with this): 1 to 16 hours, then 1 to 64 days.
 */
export const SPAN_HOURS = [1, 2, 4, 8, 16, 24, 48, 96, 192, 384, 768, 1536] as const;
const LONGEST_FIRST = [...SPAN_HOURS].reverse();

/**
 * Whole hours as the fewest spans of migration 0039, greedily: from the first hour, each time the
 * longest span that starts there (its start a multiple of its length since the epoch) and fits. A
 * 30-day window takes about a dozen, a year about twenty.
 */
export function hourSpans(hours: Span): { hours: number[]; starts: string[] } {
  const spans = { hours: [] as number[], starts: [] as string[] };
  const end = hours.to.getTime() / HOUR_MS;
  for (let at = hours.from.getTime() / HOUR_MS; at < end; ) {
    const length = LONGEST_FIRST.find((h) => at % h === 0 && at + h <= end) ?? 1;
    spans.hours.push(length);
    spans.starts.push(new Date(at * HOUR_MS).toISOString());
    at += length;
  }
  return spans;
}

/**
 * The whole units of `unitMs` (aligned on the epoch, as the rollups are) inside the window; empty
 * (both ends at `until`) when none fits, and then the edges are the whole window.
 */
function innerSpan(window: AnalyticsWindow, unitMs: number): Span {
  const from = Math.ceil(window.since.getTime() / unitMs) * unitMs;
  const to = Math.floor(window.until.getTime() / unitMs) * unitMs;
  return from < to ? { from: new Date(from), to: new Date(to) } : { from: window.until, to: window.until };
}

export function createAnalyticsQueries(db: CommonQueryMethods) {
  const ownTransfers = (tenant: Tenant) =>
    sql.fragment`t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}`;
  const createdIn = (window: AnalyticsWindow) =>
    sql.fragment`t.created_at >= ${window.since.toISOString()} AND t.created_at < ${window.until.toISOString()}`;
  // Downloads of the tenant's transfers (whenever created) in [from, to): the raw rows.
  const downloadsBetween = (tenant: Tenant, from: Date, to: Date) => sql.fragment`
    SELECT d.transfer_id, d.ip_address, d.created_at FROM transfers t
    JOIN transfer_downloads d ON d.transfer_id = t.id
    WHERE ${ownTransfers(tenant)} AND d.created_at >= ${from.toISOString()} AND d.created_at < ${to.toISOString()}`;
  // The window's raw downloads outside `inner`, its whole rollup units (quarters or hours,
  // migrations 0036 and 0039): the partial units at its two edges, each download at its own instant.
  const edges = (tenant: Tenant, window: AnalyticsWindow, inner: Span) => sql.fragment`
    SELECT * FROM (${downloadsBetween(tenant, window.since, inner.from)}) head
    UNION ALL SELECT * FROM (${downloadsBetween(tenant, inner.to, window.until)}) tail`;
  // The rows of a span rollup (migration 0039) that cover the whole hours `inner`, exactly once.
  const spanRows = (table: 'analytics_transfer_spans' | 'analytics_address_spans', tenant: Tenant, inner: Span) => {
    const spans = hourSpans(inner);
    return sql.fragment`
      SELECT r.* FROM ${sql.identifier([table])} r
      JOIN unnest(${sql.array(spans.hours, 'int4')}, ${sql.array(spans.starts, 'timestamptz')}) w (hours, start)
        ON r.hours = w.hours AND r.start = w.start
      WHERE r.workspace_id = ${tenant.workspaceId} AND r.environment = ${tenant.environment}`;
  };
  const quarterStamps = (tenant: Tenant, window: AnalyticsWindow) => {
    const inner = innerSpan(window, QUARTER_MS);
    return sql.fragment`
      SELECT q.quarter AS at, q.downloads FROM analytics_download_quarters q
      WHERE q.workspace_id = ${tenant.workspaceId} AND q.environment = ${tenant.environment}
        AND q.quarter >= ${inner.from.toISOString()} AND q.quarter < ${inner.to.toISOString()}
      UNION ALL SELECT e.created_at, 1 FROM (${edges(tenant, window, inner)}) e`;
  };

  return {
    async totals(tenant: Tenant, window: AnalyticsWindow) {
      return db.one(sql.type(totalsRow)`
        WITH created AS (
          SELECT t.id, t.created_at, t.recipient FROM transfers t WHERE ${ownTransfers(tenant)} AND ${createdIn(window)}
        ), first_downloads AS (
          SELECT c.id, f.first_download_at - c.created_at AS wait
          FROM created c LEFT JOIN analytics_first_downloads f ON f.transfer_id = c.id
            AND f.workspace_id = ${tenant.workspaceId} AND f.environment = ${tenant.environment}
        )
        SELECT
          (SELECT count(*) FROM created) AS transfers_created,
          (SELECT coalesce(sum(f.size), 0) FROM created c JOIN transfer_files f ON f.transfer_id = c.id
            WHERE f.upload_state = 'uploaded') AS bytes_sent,
          (SELECT coalesce(sum(s.downloads), 0) FROM (${quarterStamps(tenant, window)}) s) AS downloads,
          (SELECT count(DISTINCT address) FROM (
             SELECT lower(r.email) AS address FROM created c JOIN transfer_recipients r ON r.transfer_id = c.id
             UNION ALL SELECT lower(c.recipient) FROM created c WHERE c.recipient IS NOT NULL) a) AS unique_recipients,
          (SELECT count(*) FROM first_downloads WHERE wait IS NOT NULL) AS downloaded_transfers,
          (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM wait))
             FROM first_downloads WHERE wait IS NOT NULL) AS median_seconds_to_first_download`);
    },

    /** Each local day of the window in `timeZone`, days without activity included. */
    async byDay(tenant: Tenant, window: AnalyticsWindow) {
      const zone = window.timeZone;
      return db.any(sql.type(dayRow)`
        WITH days AS (
          SELECT generate_series(
            date_trunc('day', ${window.since.toISOString()}::timestamptz AT TIME ZONE ${zone}),
            date_trunc('day', (${window.until.toISOString()}::timestamptz - interval '1 millisecond') AT TIME ZONE ${zone}),
            interval '1 day') AS day
        ), created AS (
          SELECT date_trunc('day', t.created_at AT TIME ZONE ${zone}) AS day, count(*) AS n,
                 coalesce(sum((SELECT sum(f.size) FROM transfer_files f
                               WHERE f.transfer_id = t.id AND f.upload_state = 'uploaded')), 0) AS bytes
          FROM transfers t WHERE ${ownTransfers(tenant)} AND ${createdIn(window)} GROUP BY 1
        ), downloaded AS (
          SELECT date_trunc('day', s.at AT TIME ZONE ${zone}) AS day, sum(s.downloads) AS n
          FROM (${quarterStamps(tenant, window)}) s GROUP BY 1
        )
        SELECT to_char(days.day, 'YYYY-MM-DD') AS date, coalesce(created.n, 0) AS transfers_created,
               coalesce(created.bytes, 0) AS bytes_sent, coalesce(downloaded.n, 0) AS downloads
        FROM days LEFT JOIN created USING (day) LEFT JOIN downloaded USING (day)
        ORDER BY days.day`);
    },

    /** Downloads in the window by client address (the country is looked up offline, lib/net/country.ts). */
    async downloadsByAddress(tenant: Tenant, window: AnalyticsWindow) {
      const hours = innerSpan(window, HOUR_MS);
      return db.any(sql.type(addressRow)`
        SELECT nullif(a.ip_address, '') AS ip_address, sum(a.downloads) AS downloads FROM (
          SELECT r.ip_address, r.downloads FROM (${spanRows('analytics_address_spans', tenant, hours)}) r
          UNION ALL SELECT coalesce(e.ip_address, ''), 1 FROM (${edges(tenant, window, hours)}) e) a
        GROUP BY a.ip_address`);
    },

    /**
     * The transfers created in the window, by how far each went: each step counts only transfers
     * that reached the step before it, so the funnel never widens. Each table is read once for the
     * window's transfers, grouped, rather than probed once per transfer.
     */
    async funnel(tenant: Tenant, window: AnalyticsWindow) {
      return db.one(sql.type(funnelRow)`
        WITH created AS (
          SELECT t.id FROM transfers t WHERE ${ownTransfers(tenant)} AND ${createdIn(window)}
        ), files AS (
          SELECT f.transfer_id, count(*) AS files, bool_or(f.upload_state <> 'uploaded') AS pending
          FROM created c JOIN transfer_files f ON f.transfer_id = c.id GROUP BY f.transfer_id
        ), per_grant AS (
          SELECT r.transfer_id, count(*) AS delivered
          FROM created c JOIN transfer_recipients r ON r.transfer_id = c.id
          JOIN recipient_grants g ON g.transfer_recipient_id = r.id AND g.completed_at IS NOT NULL
          JOIN recipient_deliveries v ON v.grant_id = g.grant_id AND v.completed_at IS NOT NULL
          GROUP BY r.transfer_id, g.grant_id
        ), delivered_whole AS (
          SELECT DISTINCT p.transfer_id FROM per_grant p
          JOIN files ON files.transfer_id = p.transfer_id AND files.files = p.delivered
        ), reached AS (
          SELECT coalesce(NOT files.pending, true) AS uploaded, first.transfer_id IS NOT NULL AS downloaded,
                 whole.transfer_id IS NOT NULL AS delivered_whole
          FROM created c
          LEFT JOIN files ON files.transfer_id = c.id
          LEFT JOIN analytics_first_downloads first ON first.transfer_id = c.id
            AND first.workspace_id = ${tenant.workspaceId} AND first.environment = ${tenant.environment}
          LEFT JOIN delivered_whole whole ON whole.transfer_id = c.id
        )
        SELECT count(*) AS created,
               count(*) FILTER (WHERE uploaded) AS uploaded,
               count(*) FILTER (WHERE uploaded AND downloaded) AS first_download,
               count(*) FILTER (WHERE uploaded AND downloaded AND delivered_whole) AS all_files_downloaded
        FROM reached`);
    },

    /** Downloads in the window by ISO weekday (1 Monday … 7 Sunday) and hour, local to `timeZone`. */
    async heatmap(tenant: Tenant, window: AnalyticsWindow) {
      const local = sql.fragment`(s.at AT TIME ZONE ${window.timeZone})`;
      return db.any(sql.type(heatmapRow)`
        SELECT extract(isodow FROM ${local})::int AS weekday, extract(hour FROM ${local})::int AS hour,
               sum(s.downloads) AS downloads
        FROM (${quarterStamps(tenant, window)}) s GROUP BY 1, 2 ORDER BY 1, 2`);
    },

    async topTransfers(tenant: Tenant, window: AnalyticsWindow, limit: number) {
      const hours = innerSpan(window, HOUR_MS);
      return db.any(sql.type(topTransferRow)`
        SELECT t.id, t.short_code, t.transfer_title, t.created_at, top.downloads
        FROM (SELECT s.transfer_id, sum(s.downloads) AS downloads FROM (
                SELECT r.transfer_id, r.downloads FROM (${spanRows('analytics_transfer_spans', tenant, hours)}) r
                UNION ALL SELECT e.transfer_id, 1 FROM (${edges(tenant, window, hours)}) e) s
              GROUP BY s.transfer_id) top
        JOIN transfers t ON t.id = top.transfer_id
        ORDER BY top.downloads DESC, t.id
        LIMIT ${limit}`);
    },

    /** Recipients of the transfers created in the window, by the downloads their personal links completed. */
    async topRecipients(tenant: Tenant, window: AnalyticsWindow, limit: number) {
      return db.any(sql.type(topRecipientRow)`
        SELECT lower(r.email) AS email, count(DISTINCT r.transfer_id) AS transfers,
               sum(r.downloads_completed) AS downloads
        FROM transfers t JOIN transfer_recipients r ON r.transfer_id = t.id
        WHERE ${ownTransfers(tenant)} AND ${createdIn(window)}
          AND r.workspace_id = ${tenant.workspaceId} AND r.environment = ${tenant.environment}
        GROUP BY lower(r.email)
        ORDER BY downloads DESC, email
        LIMIT ${limit}`);
    },
  };
}
