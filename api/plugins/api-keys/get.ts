import { getApiKey } from '../../../lib/api-keys/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { apiKey } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/api-keys/{id}',
  options: {
    id: 'apiKeys.get',
    description: 'Fetch an API key',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage' } },
    validate: { params: idParams },
    response: { schema: apiKey },
  },
  handler: (request) => getApiKey(request.server.app.services, callerOf(request), request.params.id),
});
