import type { Family } from '../family.ts';
import { SCIM_OPERATIONS, SCIM_RESOURCE_TYPES } from './vocabulary.ts';

// The members' own SCIM attributes are columns of `users` (the workspaces family declares them).
export const scimFamily = {
  name: 'scim',
  openapi: {
    tag: 'scim',
    description: 'SCIM 2.0 provisioning: the tokens identity providers use, and the audit of what they did.',
  },
  tables: {
    scim_tokens: { scope: { kind: 'tenant' }, personal: [] },
    scim_groups: { scope: { kind: 'workspace' }, personal: [] },
    scim_group_members: { scope: { kind: 'child', parent: 'scim_groups', column: 'group_id' }, personal: [] },
    scim_audit_events: {
      scope: { kind: 'tenant' },
      personal: [],
      vocabulary: { operation: SCIM_OPERATIONS, resource_type: SCIM_RESOURCE_TYPES },
    },
  },
} satisfies Family;
