import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { listApiKeys } from '../../../lib/api-keys/service.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { apiKeyList } from './schemas.ts';

export const listRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/api-keys',
  options: {
    id: 'apiKeys.list',
    description: 'List API keys',
    notes: 'Newest first. Only keys of the calling environment; never the full values.',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage' } },
    validate: { query: Joi.object(pageQuery()) },
    response: { schema: apiKeyList },
  },
  handler: (request) => listApiKeys(request.server.app.services, callerOf(request), request.query as never),
};
