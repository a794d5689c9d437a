import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { listWebhooks } from '../../../lib/webhooks/service.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { webhookList } from './schemas.ts';

export const listRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/webhooks',
  options: {
    id: 'webhooks.list',
    description: 'List webhooks',
    tags: ['api', 'webhooks'],
    plugins: { valise: { scope: 'webhooks:read' } },
    validate: { query: Joi.object(pageQuery()) },
    response: { schema: webhookList },
  },
  handler: (request) => listWebhooks(request.server.app.services, callerOf(request), request.query as never),
};
