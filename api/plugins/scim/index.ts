import type { Plugin } from '@hapi/hapi';
import { auditRoute } from './audit.ts';
import {
  resourceTypeRoute,
  resourceTypesRoute,
  schemaRoute,
  schemasRoute,
  serviceProviderConfigRoute,
} from './discovery.ts';
import { groupsCreateRoute } from './groups-create.ts';
import { groupsDeleteRoute } from './groups-delete.ts';
import { groupsGetRoute } from './groups-get.ts';
import { groupsListRoute } from './groups-list.ts';
import { groupsPatchRoute } from './groups-patch.ts';
import { groupsReplaceRoute } from './groups-replace.ts';
import { createTokenRoute } from './tokens-create.ts';
import { listTokensRoute } from './tokens-list.ts';
import { revokeTokenRoute } from './tokens-revoke.ts';
import { usersCreateRoute } from './users-create.ts';
import { usersDeleteRoute } from './users-delete.ts';
import { usersGetRoute } from './users-get.ts';
import { usersListRoute } from './users-list.ts';
import { usersPatchRoute } from './users-patch.ts';
import { usersReplaceRoute } from './users-replace.ts';

// /v1/scim (docs/scim.md): the tokens and the SCIM audit are API-key routes; Users, Groups and the
// discovery endpoints are the SCIM protocol (RFC 7644), opened by SCIM tokens only.
export const scimPlugin: Plugin<void> = {
  name: 'valise-scim',
  register(server) {
    server.route([
      createTokenRoute,
      listTokensRoute,
      revokeTokenRoute,
      auditRoute,
      usersListRoute,
      usersGetRoute,
      usersCreateRoute,
      usersReplaceRoute,
      usersPatchRoute,
      usersDeleteRoute,
      groupsListRoute,
      groupsGetRoute,
      groupsCreateRoute,
      groupsReplaceRoute,
      groupsPatchRoute,
      groupsDeleteRoute,
      serviceProviderConfigRoute,
      resourceTypesRoute,
      resourceTypeRoute,
      schemasRoute,
      schemaRoute,
    ]);
  },
};
