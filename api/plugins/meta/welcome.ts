import Joi from 'joi';
import { defineRoute } from '../../route.ts';
import { API_REVISION, OPENAPI_DOCUMENT_VERSION } from '../../version.ts';

export const welcomeRoute = defineRoute({
  method: 'GET',
  path: '/v1/welcome',
  options: {
    id: 'meta.welcome',
    auth: false,
    description: 'Welcome and API metadata',
    tags: ['api', 'meta'],
    response: {
      schema: Joi.object({
        object: Joi.string().valid('welcome'),
        message: Joi.string(),
        api_version: Joi.string(),
        openapi_version: Joi.string(),
        openapi_url: Joi.string(),
        docs_url: Joi.string(),
        authentication: Joi.string(),
        key_prefixes: Joi.object().pattern(Joi.string(), Joi.string()),
        server_time: Joi.date().iso(),
      }).label('Welcome'),
    },
  },
  handler: (request) => {
    const { config } = request.server.app.services;
    return {
      object: 'welcome',
      message:
        'Welcome to Valise: encrypted file transfer with a REST API. Authenticate with `Authorization: Bearer <API_KEY>`.',
      api_version: API_REVISION,
      openapi_version: OPENAPI_DOCUMENT_VERSION,
      openapi_url: `${config.api.publicBaseUrl}/v1/openapi.json`,
      docs_url: config.api.docsBaseUrl,
      authentication: 'bearer',
      key_prefixes: {
        svc_live_: 'live, full',
        svc_test_: 'test, full',
        svc_sandbox_: 'sandbox, isolated, auto-purged after 24 hours (its keys included)',
        svc_rk_live_: 'live, restricted',
        svc_rk_test_: 'test, restricted',
        svc_mcp_: 'MCP token: the hosted MCP endpoint of its workspace only',
      },
      server_time: new Date(),
    };
  },
});
