import { type AnalyticsWindow, createAnalyticsQueries } from '../db/queries/analytics.ts';
import { DomainError } from '../errors.ts';
import { countryOf } from '../net/country.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';

// The analytics routes (docs/analytics.md): read-only numbers over a window of time, for the
// caller's workspace and environment only.

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 366;
export const TOP_LIMIT_MAX = 100;

/** The window every analytics route takes: `since` inclusive, `until` exclusive, `tz` an IANA zone. */
export type AnalyticsQuery = { since?: Date; until?: Date; tz?: string };
export type TopQuery = AnalyticsQuery & { limit?: number };

/** Whether `zone` is a time zone Intl knows (an IANA name such as `Asia/Kolkata`, or `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The window a query names: the last 30 days by default; until after since, at most 366 days. */
export function windowOf(query: AnalyticsQuery, now = new Date()): AnalyticsWindow {
  const until = query.until ?? now;
  const since = query.since ?? new Date(until.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (until.getTime() <= since.getTime()) {
    throw new DomainError('validation_error', '`until` must be later than `since`.', { param: 'until' });
  }
  if (until.getTime() - since.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    throw new DomainError('validation_error', `The range may span at most ${MAX_RANGE_DAYS} days.`, {
      param: 'since',
    });
  }
  const timeZone = query.tz ?? 'UTC';
  if (!isTimeZone(timeZone)) throw new DomainError('validation_error', 'Unknown time zone.', { param: 'tz' });
  return { since, until, timeZone };
}

function presentWindow(window: AnalyticsWindow) {
  return { since: window.since, until: window.until, tz: window.timeZone };
}

export async function analyticsSummary(services: Services, caller: Caller, query: AnalyticsQuery) {
  const window = windowOf(query);
  const queries = createAnalyticsQueries(services.db);
  const tenant = tenantOf(caller);
  const [totals, days] = await Promise.all([queries.totals(tenant, window), queries.byDay(tenant, window)]);
  const { downloaded_transfers: downloaded, ...counts } = totals;
  return {
    object: 'analytics_summary' as const,
    ...presentWindow(window),
    ...counts,
    completion_rate: totals.transfers_created === 0 ? null : downloaded / totals.transfers_created,
    days,
  };
}

export async function analyticsGeo(services: Services, caller: Caller, query: AnalyticsQuery) {
  const window = windowOf(query);
  const addresses = await createAnalyticsQueries(services.db).downloadsByAddress(tenantOf(caller), window);
  const byCountry = new Map<string | null, { downloads: number; visitors: number }>();
  for (const { ip_address, downloads } of addresses) {
    const country = countryOf(ip_address);
    const entry = byCountry.get(country) ?? { downloads: 0, visitors: 0 };
    entry.downloads += downloads;
    if (ip_address !== null) entry.visitors += 1;
    byCountry.set(country, entry);
  }
  const countries = [...byCountry]
    .map(([country_code, counts]) => ({ country_code, ...counts }))
    .sort((a, b) => b.downloads - a.downloads || (a.country_code ?? '~').localeCompare(b.country_code ?? '~'));
  return { object: 'analytics_geo' as const, ...presentWindow(window), countries };
}

const rate = (part: number, whole: number) => (whole === 0 ? null : part / whole);

export async function analyticsFunnel(services: Services, caller: Caller, query: AnalyticsQuery) {
  const window = windowOf(query);
  const counts = await createAnalyticsQueries(services.db).funnel(tenantOf(caller), window);
  const order = ['created', 'uploaded', 'first_download', 'all_files_downloaded'] as const;
  const steps = order.map((step, i) => ({
    step,
    count: counts[step],
    conversion: i === 0 ? rate(counts[step], counts.created) : rate(counts[step], counts[order[i - 1] ?? 'created']),
    overall: rate(counts[step], counts.created),
  }));
  return { object: 'analytics_funnel' as const, ...presentWindow(window), steps };
}

export async function analyticsHeatmap(services: Services, caller: Caller, query: AnalyticsQuery) {
  const window = windowOf(query);
  const cells = await createAnalyticsQueries(services.db).heatmap(tenantOf(caller), window);
  return { object: 'analytics_heatmap' as const, ...presentWindow(window), cells };
}

export async function analyticsTopTransfers(services: Services, caller: Caller, query: TopQuery) {
  const window = windowOf(query);
  const rows = await createAnalyticsQueries(services.db).topTransfers(tenantOf(caller), window, query.limit ?? 10);
  return { object: 'analytics_top_transfers' as const, ...presentWindow(window), transfers: rows };
}

export async function analyticsTopRecipients(services: Services, caller: Caller, query: TopQuery) {
  const window = windowOf(query);
  const rows = await createAnalyticsQueries(services.db).topRecipients(tenantOf(caller), window, query.limit ?? 10);
  return { object: 'analytics_top_recipients' as const, ...presentWindow(window), recipients: rows };
}
