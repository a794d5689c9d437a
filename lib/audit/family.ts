import { type Family, NETWORK_IDENTITY } from '../family.ts';

export const auditFamily = {
  name: 'audit',
  openapi: { tag: 'audit', description: "The workspace's audit log." },
  tables: {
    // Purged and erased by the generic paths until the log's hash chain lands: its entries then go
    // through `retention.purge` (purgeAuditBefore) and an `erase` hook (lib/audit/retention.ts),
    // which keep the chain verifiable past purged and erased entries.
    audit_log: {
      scope: { kind: 'tenant' },
      personal: [...NETWORK_IDENTITY, 'country_code'],
      subjects: { userIds: ['actor_id'] },
    },
  },
} satisfies Family;
