import type { Family } from '../family.ts';

// Analytics read the transfers family's rows, and keep four rollups of its downloads, maintained by
// triggers on transfer_downloads in the same transaction (migrations 0036 and 0039,
// docs/analytics.md, "Design"). They are counts; the one that counts by client address holds the
// address as the downloads do, and a row goes when the last download it counts goes. The purge
// removes them by their own dates, and a purged transfer's counts are taken off before it goes
// (analytics_forget_transfer).
export const analyticsFamily = {
  name: 'analytics',
  openapi: {
    tag: 'analytics',
    description: 'Numbers about transfers and their downloads over a window of time: totals, countries, funnel, hours.',
  },
  tables: {
    analytics_download_quarters: { scope: { kind: 'tenant' }, personal: [], age: 'quarter' },
    analytics_transfer_spans: { scope: { kind: 'tenant' }, personal: [], age: 'ends_at' },
    analytics_address_spans: {
      scope: { kind: 'tenant' },
      personal: ['ip_address'],
      age: 'ends_at',
      unattributed:
        'Counts of downloads by network address, as the downloads themselves: nothing ties one to a person.',
    },
    analytics_first_downloads: { scope: { kind: 'tenant' }, personal: [], age: 'first_download_at' },
  },
} satisfies Family;
