import type { Family } from '../family.ts';
import { RECIPIENT_SOURCES } from './vocabulary.ts';

export const recipientsFamily = {
  name: 'recipients',
  openapi: {
    tag: 'recipients',
    description: "The workspace's address book, and each recipient's personal links and downloads.",
  },
  tables: {
    recipients: {
      scope: { kind: 'tenant' },
      personal: ['email', 'name', 'organisation'],
      subjects: { emails: ['email'] },
      vocabulary: { source: RECIPIENT_SOURCES },
    },
    transfer_recipients: { scope: { kind: 'tenant' }, personal: ['email'], subjects: { emails: ['email'] } },
    recipient_grants: {
      scope: { kind: 'child', parent: 'transfer_recipients', column: 'transfer_recipient_id' },
      personal: [],
    },
    recipient_deliveries: { scope: { kind: 'child', parent: 'recipient_grants', column: 'grant_id' }, personal: [] },
  },
} satisfies Family;
