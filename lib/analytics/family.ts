import type { Family } from '../family.ts';

// Analytics read the transfers family's rows, and keep three rollups of its downloads, maintained by
// triggers on transfer_downloads in the same transaction (migration 0036, docs/analytics.md,
// "Design"). They are counts: no address, no person. The purge removes them by their own dates,
// and a purged transfer's counts are taken off before it goes (analytics_forget_transfer).
export const analyticsFamily = {
  name: 'analytics',
  openapi: {
    tag: 'analytics',
    description: 'Numbers about transfers and their downloads over a window of time: totals, countries, funnel, hours.',
  },
  tables: {
    analytics_download_quarters: { scope: { kind: 'tenant' }, personal: [], age: 'quarter' },
    analytics_transfer_days: { scope: { kind: 'tenant' }, personal: [], age: 'day' },
    analytics_first_downloads: { scope: { kind: 'tenant' }, personal: [], age: 'first_download_at' },
  },
} satisfies Family;
