// The SCIM family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/**
 * What a SCIM audit event records (spec: GET /v1/scim/audit): PATCH and PUT are `update_*`, reading
 * one resource is `list_*`.
 */
export const SCIM_OPERATIONS = [
  'create_user',
  'update_user',
  'delete_user',
  'create_group',
  'update_group',
  'delete_group',
  'list_users',
  'list_groups',
] as const;
export type ScimOperation = (typeof SCIM_OPERATIONS)[number];

/** The SCIM resource types served (RFC 7643). */
export const SCIM_RESOURCE_TYPES = ['User', 'Group'] as const;
export type ScimResourceType = (typeof SCIM_RESOURCE_TYPES)[number];
