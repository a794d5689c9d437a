import { type Family, NETWORK_IDENTITY } from '../family.ts';

export const auditFamily = {
  name: 'audit',
  openapi: { tag: 'audit', description: "The workspace's audit log." },
  tables: {
    audit_log: { scope: { kind: 'tenant' }, personal: [...NETWORK_IDENTITY, 'country_code'] },
    // One row per chain: its lock and the anchor verification starts from (migration 0031).
    audit_chain_heads: { scope: { kind: 'tenant' }, personal: [] },
  },
} satisfies Family;
