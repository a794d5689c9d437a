import type { Family } from '../family.ts';

export const eventsFamily = {
  name: 'events',
  // Payloads name recipients, submitters and members (lib/events/catalog.ts).
  tables: { events: { scope: { kind: 'tenant' }, personal: ['data'], subjects: { emails: ['data'] } } },
} satisfies Family;
