import { resourceTypes, schemas, serviceProviderConfig } from '../../../lib/scim/discovery.ts';
import { defineRoute } from '../../route.ts';
import { scimAnswer, scimAuth } from './schemas.ts';

// RFC 7644 §4: read by identity providers before they provision; the same for every workspace,
// behind a SCIM token all the same (Okta and Entra ID send theirs).

export const serviceProviderConfigRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/ServiceProviderConfig',
  options: {
    description: 'What this SCIM service provider supports',
    auth: scimAuth,
    response: { schema: scimAnswer },
  },
  handler: (request) => serviceProviderConfig(request.server.app.services.config.api.publicBaseUrl),
});

export const resourceTypesRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/ResourceTypes',
  options: { description: 'The SCIM resource types served', auth: scimAuth, response: { schema: scimAnswer } },
  handler: (request) => resourceTypes(request.server.app.services.config.api.publicBaseUrl),
});

export const schemasRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Schemas',
  options: { description: 'The SCIM schemas served', auth: scimAuth, response: { schema: scimAnswer } },
  handler: (request) => schemas(request.server.app.services.config.api.publicBaseUrl),
});
