import { type Family, NETWORK_IDENTITY } from '../family.ts';
import { AUDIT_OUTCOMES } from '../vocabulary.ts';
import { eraseAuditPersonalData, purgeAuditBefore } from './retention.ts';

// The log is hash-chained (docs/audit.md, "Integrity"), so it purges and erases itself: a purge
// moves the chain's anchor past the entries it deletes, an erasure keeps each entry's digest of
// what it removes, and the chain still verifies after both.
export const auditFamily = {
  name: 'audit',
  openapi: { tag: 'audit', description: "The workspace's audit log." },
  tables: {
    audit_log: {
      scope: { kind: 'tenant' },
      // Metadata may name people (a recipient's address); its personal keys are those
      // audit_personal_metadata_keys() lists (migration 0031).
      personal: [...NETWORK_IDENTITY, 'country_code', 'metadata'],
      subjects: { userIds: ['actor_id'] },
      vocabulary: { status: AUDIT_OUTCOMES },
      erase: (tx, subject) =>
        eraseAuditPersonalData(tx, subject.workspaceId, { actorIds: [subject.userId], emails: subject.emails }),
    },
    // One row per chain: its lock and the anchor verification starts from (migration 0031). State,
    // not dated records: it stays while its workspace does.
    audit_chain_heads: { scope: { kind: 'tenant' }, personal: [], age: null },
  },
  retention: { purge: ({ db }, { tenant, cutoff }) => purgeAuditBefore(db, tenant, cutoff) },
} satisfies Family;
