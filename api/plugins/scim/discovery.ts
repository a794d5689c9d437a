import { resourceType, resourceTypes, schema, schemas, serviceProviderConfig } from '../../../lib/scim/discovery.ts';
import { defineRoute } from '../../route.ts';
import {
  scimAuth,
  scimIdParams,
  scimProtocol,
  scimResourceType,
  scimResourceTypeList,
  scimSchema,
  scimSchemaList,
  scimServiceProviderConfig,
} from './schemas.ts';

// RFC 7644 §4: read by identity providers before they provision; the same for every workspace,
// behind a SCIM token all the same (Okta and Entra ID send theirs).

export const serviceProviderConfigRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/ServiceProviderConfig',
  options: {
    id: 'scim.serviceProviderConfig',
    description: 'What this SCIM service provider supports',
    notes: 'RFC 7644 §4: patch, filters (up to 200 results a page) and ETags; no bulk, sorting or password changes.',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol() },
    response: { schema: scimServiceProviderConfig },
  },
  handler: (request) => serviceProviderConfig(request.server.app.services.config.api.publicBaseUrl),
});

export const resourceTypesRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/ResourceTypes',
  options: {
    id: 'scim.resourceTypes',
    description: 'The SCIM resource types served',
    notes: 'User (with the enterprise extension) and Group, as an RFC 7644 ListResponse.',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol() },
    response: { schema: scimResourceTypeList },
  },
  handler: (request) => resourceTypes(request.server.app.services.config.api.publicBaseUrl),
});

export const schemasRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Schemas',
  options: {
    id: 'scim.schemas',
    description: 'The SCIM schemas served',
    notes: 'The attributes of User, of its enterprise extension and of Group, as an RFC 7644 ListResponse.',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol() },
    response: { schema: scimSchemaList },
  },
  handler: (request) => schemas(request.server.app.services.config.api.publicBaseUrl),
});

export const resourceTypeRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/ResourceTypes/{id}',
  options: {
    id: 'scim.getResourceType',
    description: 'One SCIM resource type',
    notes: '`User` or `Group`, where its `meta.location` says.',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol() },
    validate: { params: scimIdParams },
    response: { schema: scimResourceType },
  },
  handler: (request) => resourceType(request.server.app.services.config.api.publicBaseUrl, request.params.id),
});

export const schemaRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Schemas/{id}',
  options: {
    id: 'scim.getSchema',
    description: 'One SCIM schema',
    notes: 'By its URN, without regard to case (RFC 7644 §4), where its `meta.location` says.',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol() },
    validate: { params: scimIdParams },
    response: { schema: scimSchema },
  },
  handler: (request) => schema(request.server.app.services.config.api.publicBaseUrl, request.params.id),
});
