import Joi from 'joi';
import { isTimeZone, TOP_LIMIT_MAX } from '../../../lib/analytics/service.ts';
import { timestamp } from '../../schemas.ts';

/** The window every analytics route takes (docs/analytics.md, "The window"). */
export const windowQuery = {
  since: timestamp,
  until: timestamp,
  tz: Joi.string()
    .max(64)
    .custom((value: string, helpers) => (isTimeZone(value) ? value : helpers.error('any.invalid')))
    .messages({ 'any.invalid': '"tz" must be an IANA time zone' }),
};

/** How many rows a top list answers: clamped to 1 … 100, like a page's limit. */
export const topLimit = Joi.number()
  .integer()
  .unsafe()
  .default(10)
  .custom((value: number) => Math.min(TOP_LIMIT_MAX, Math.max(1, value)));

const count = Joi.number().integer().min(0);
const ratio = Joi.number().min(0).max(1);

const windowFields = {
  since: timestamp.required(),
  until: timestamp.required(),
  tz: Joi.string().required(),
};

export const summary = Joi.object({
  object: Joi.string().valid('analytics_summary').required(),
  ...windowFields,
  transfers_created: count.required(),
  bytes_sent: count.required(),
  downloads: count.required(),
  unique_recipients: count.required(),
  completion_rate: ratio.allow(null).required(),
  median_seconds_to_first_download: Joi.number().min(0).allow(null).required(),
  days: Joi.array()
    .items(
      Joi.object({
        date: Joi.string().required(),
        transfers_created: count.required(),
        bytes_sent: count.required(),
        downloads: count.required(),
      }).label('AnalyticsDay'),
    )
    .required(),
}).label('AnalyticsSummary');

export const geo = Joi.object({
  object: Joi.string().valid('analytics_geo').required(),
  ...windowFields,
  countries: Joi.array()
    .items(
      Joi.object({
        country_code: Joi.string().length(2).allow(null).required(),
        downloads: count.required(),
        visitors: count.required(),
      }).label('AnalyticsCountry'),
    )
    .required(),
}).label('AnalyticsGeo');

export const funnel = Joi.object({
  object: Joi.string().valid('analytics_funnel').required(),
  ...windowFields,
  steps: Joi.array()
    .items(
      Joi.object({
        step: Joi.string().valid('created', 'uploaded', 'first_download', 'all_files_downloaded').required(),
        count: count.required(),
        conversion: ratio.allow(null).required(),
        overall: ratio.allow(null).required(),
      }).label('AnalyticsFunnelStep'),
    )
    .required(),
}).label('AnalyticsFunnel');

export const heatmap = Joi.object({
  object: Joi.string().valid('analytics_heatmap').required(),
  ...windowFields,
  cells: Joi.array()
    .items(
      Joi.object({
        weekday: Joi.number().integer().min(1).max(7).required(),
        hour: Joi.number().integer().min(0).max(23).required(),
        downloads: count.required(),
      }).label('AnalyticsHeatmapCell'),
    )
    .required(),
}).label('AnalyticsHeatmap');

export const topTransfers = Joi.object({
  object: Joi.string().valid('analytics_top_transfers').required(),
  ...windowFields,
  transfers: Joi.array()
    .items(
      Joi.object({
        id: Joi.string().required(),
        short_code: Joi.string().required(),
        transfer_title: Joi.string().allow(null, '').required(),
        created_at: timestamp.required(),
        downloads: count.required(),
      }).label('AnalyticsTopTransfer'),
    )
    .required(),
}).label('AnalyticsTopTransfers');

export const topRecipients = Joi.object({
  object: Joi.string().valid('analytics_top_recipients').required(),
  ...windowFields,
  recipients: Joi.array()
    .items(
      Joi.object({
        email: Joi.string().required(),
        transfers: count.required(),
        downloads: count.required(),
      }).label('AnalyticsTopRecipient'),
    )
    .required(),
}).label('AnalyticsTopRecipients');
