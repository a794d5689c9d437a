import type { Family } from '../family.ts';

export const workspacesFamily = {
  name: 'workspaces',
  tables: {
    workspaces: { scope: { kind: 'root' }, personal: [] },
    users: { scope: { kind: 'workspace' }, personal: ['email'], subjects: { userIds: ['id'], emails: ['email'] } },
    mfa_failures: { scope: { kind: 'child', parent: 'users', column: 'user_id' }, personal: [] },
    // Answers replayed to a retried write, sealed.
    idempotency_records: { scope: { kind: 'tenant' }, personal: [] },
  },
} satisfies Family;
