import Joi from 'joi';
import { listApiKeys } from '../../../lib/api-keys/service.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { apiKeyList } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/api-keys',
  options: {
    id: 'apiKeys.list',
    description: 'List API keys',
    notes: 'Newest first. Only keys of the calling environment; never the full values.',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: apiKeyList },
  },
  handler: (request) => listApiKeys(request.server.app.services, callerOf(request), request.query),
});
