import type { Family } from '../family.ts';
import { DELIVERY_STATUSES, DELIVERY_TRIGGERS } from '../vocabulary.ts';

export const webhooksFamily = {
  name: 'webhooks',
  openapi: { tag: 'webhooks', description: 'Webhook endpoints, their deliveries and the event catalog.' },
  tables: {
    webhooks: { scope: { kind: 'tenant' }, personal: [] },
    webhook_deliveries: {
      scope: { kind: 'child', parent: 'webhooks', column: 'webhook_id' },
      personal: [],
      vocabulary: { status: DELIVERY_STATUSES },
    },
    webhook_delivery_attempts: {
      scope: { kind: 'child', parent: 'webhook_deliveries', column: 'delivery_id' },
      personal: [],
      vocabulary: { trigger: DELIVERY_TRIGGERS },
    },
  },
} satisfies Family;
