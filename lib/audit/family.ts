import { type Family, NETWORK_IDENTITY } from '../family.ts';

export const auditFamily = {
  name: 'audit',
  openapi: { tag: 'audit', description: "The workspace's audit log." },
  tables: {
    // Erased through the generic path for now; a family hook (`erase`) on this table takes over when
    // the log is chained (the hash chain must then be kept verifiable).
    audit_log: {
      scope: { kind: 'tenant' },
      personal: [...NETWORK_IDENTITY, 'country_code'],
      subjects: { userIds: ['actor_id'] },
    },
  },
} satisfies Family;
