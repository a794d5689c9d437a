import type { Family } from '../family.ts';

// Analytics own no table: they read the transfers family's rows (docs/analytics.md, "Design"), so
// they hold no personal data of their own and nothing of theirs needs purging or erasing.
export const analyticsFamily = {
  name: 'analytics',
  openapi: {
    tag: 'analytics',
    description: 'Numbers about transfers and their downloads over a window of time: totals, countries, funnel, hours.',
  },
  tables: {},
} satisfies Family;
