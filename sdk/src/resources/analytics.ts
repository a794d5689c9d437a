import type { RequestOptions } from '../client.ts';
import type { QueryOf, ResponseOf } from '../types.ts';
import { Resource } from './resource.ts';

export type AnalyticsWindowParams = QueryOf<'/v1/analytics', 'get'>;
export type AnalyticsTopParams = QueryOf<'/v1/analytics/top-transfers', 'get'>;
export type AnalyticsSummary = ResponseOf<'/v1/analytics', 'get'>;
export type AnalyticsGeo = ResponseOf<'/v1/analytics/geo', 'get'>;
export type AnalyticsFunnel = ResponseOf<'/v1/analytics/funnel', 'get'>;
export type AnalyticsHeatmap = ResponseOf<'/v1/analytics/heatmap', 'get'>;
export type AnalyticsTopTransfers = ResponseOf<'/v1/analytics/top-transfers', 'get'>;
export type AnalyticsTopRecipients = ResponseOf<'/v1/analytics/top-recipients', 'get'>;

/**
 * Numbers about the calling environment's transfers over a window (scope `analytics:read`, rate
 * class `expensive`): `since` inclusive, `until` exclusive, the last 30 days by default.
 */
export class Analytics extends Resource {
  /** Totals and each day (in `tz`, UTC by default). */
  summary(params: AnalyticsWindowParams = {}, options?: RequestOptions): Promise<AnalyticsSummary> {
    return this.call('analytics.summary', { query: params, options });
  }

  /** Downloads and visitors by country (ISO 3166-1 alpha-2; null when unknown). */
  geo(params: AnalyticsWindowParams = {}, options?: RequestOptions): Promise<AnalyticsGeo> {
    return this.call('analytics.geo', { query: params, options });
  }

  /** Transfers created in the window: uploaded, downloaded once, every file downloaded. */
  funnel(params: AnalyticsWindowParams = {}, options?: RequestOptions): Promise<AnalyticsFunnel> {
    return this.call('analytics.funnel', { query: params, options });
  }

  /** Downloads by ISO weekday and hour in `tz`. */
  heatmap(params: AnalyticsWindowParams = {}, options?: RequestOptions): Promise<AnalyticsHeatmap> {
    return this.call('analytics.heatmap', { query: params, options });
  }

  topTransfers(params: AnalyticsTopParams = {}, options?: RequestOptions): Promise<AnalyticsTopTransfers> {
    return this.call('analytics.topTransfers', { query: params, options });
  }

  topRecipients(params: AnalyticsTopParams = {}, options?: RequestOptions): Promise<AnalyticsTopRecipients> {
    return this.call('analytics.topRecipients', { query: params, options });
  }
}
