import type { Family } from '../family.ts';
import { IDEMPOTENCY_STATES, MEMBER_ROLES } from '../vocabulary.ts';

export const workspacesFamily = {
  name: 'workspaces',
  tables: {
    workspaces: { scope: { kind: 'root' }, personal: [] },
    users: {
      scope: { kind: 'workspace' },
      // The SCIM attributes an identity provider sends about the person (migration 0033).
      personal: [
        'email',
        'emails',
        'user_name',
        'external_id',
        'display_name',
        'given_name',
        'family_name',
        'middle_name',
        'formatted_name',
        'title',
        'preferred_language',
        'employee_number',
        'cost_center',
        'organization',
        'division',
        'department',
        'manager_id',
      ],
      subjects: { userIds: ['id'], emails: ['email'] },
      vocabulary: { role: MEMBER_ROLES },
    },
    mfa_failures: { scope: { kind: 'child', parent: 'users', column: 'user_id' }, personal: [] },
    // Answers replayed to a retried write, sealed.
    idempotency_records: { scope: { kind: 'tenant' }, personal: [], vocabulary: { state: IDEMPOTENCY_STATES } },
  },
} satisfies Family;
