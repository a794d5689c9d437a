import type { Family } from '../family.ts';

export const webhooksFamily = {
  name: 'webhooks',
  openapi: { tag: 'webhooks', description: 'Webhook endpoints, their deliveries and the event catalog.' },
  tables: {
    webhooks: { scope: { kind: 'tenant' }, personal: [] },
    webhook_deliveries: { scope: { kind: 'child', parent: 'webhooks', column: 'webhook_id' }, personal: [] },
    webhook_delivery_attempts: {
      scope: { kind: 'child', parent: 'webhook_deliveries', column: 'delivery_id' },
      personal: [],
    },
  },
} satisfies Family;
