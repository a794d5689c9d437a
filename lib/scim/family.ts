import type { Family } from '../family.ts';
import { SCIM_OPERATIONS, SCIM_RESOURCE_TYPES } from './vocabulary.ts';

// The members' own SCIM attributes are columns of `users` (the workspaces family declares them).
export const scimFamily = {
  name: 'scim',
  openapi: {
    tag: 'scim',
    description:
      'SCIM 2.0 provisioning (RFC 7643, RFC 7644): the tokens identity providers use and the audit of what they did (API keys), and the SCIM protocol itself, Users, Groups and the discovery endpoints (SCIM tokens, `application/scim+json`, SCIM error bodies).',
  },
  tables: {
    // Members belong to the workspace, not to one environment: only a live key makes a SCIM token.
    scim_tokens: { scope: { kind: 'tenant', environments: ['live'] }, personal: [] },
    scim_groups: { scope: { kind: 'workspace' }, personal: [] },
    scim_group_members: { scope: { kind: 'child', parent: 'scim_groups', column: 'group_id' }, personal: [] },
    scim_audit_events: {
      scope: { kind: 'tenant', environments: ['live'] },
      personal: [],
      vocabulary: { operation: SCIM_OPERATIONS, resource_type: SCIM_RESOURCE_TYPES },
    },
  },
} satisfies Family;
