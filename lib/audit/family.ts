import { type Family, NETWORK_IDENTITY } from '../family.ts';

export const auditFamily = {
  name: 'audit',
  openapi: { tag: 'audit', description: "The workspace's audit log." },
  tables: { audit_log: { scope: { kind: 'tenant' }, personal: [...NETWORK_IDENTITY, 'country_code'] } },
  // Purged by the generic path (rows older than the cutoff) until the log's hash chain lands: its
  // entries then go through `retention: { purge: ({ db }, { tenant, cutoff }) =>
  // purgeAuditBefore(db, tenant, cutoff) }` (lib/audit/retention.ts), which keeps the chain
  // verifiable past the purged entries.
} satisfies Family;
