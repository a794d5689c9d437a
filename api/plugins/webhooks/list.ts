import Joi from 'joi';
import type { PageQuery } from '../../../lib/pagination.ts';
import { listWebhooks } from '../../../lib/webhooks/service.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { webhookList } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/webhooks',
  options: {
    id: 'webhooks.list',
    description: 'List webhooks',
    tags: ['api', 'webhooks'],
    plugins: { valise: { scope: 'webhooks:read' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: webhookList },
  },
  handler: (request) => listWebhooks(request.server.app.services, callerOf(request), request.query),
});
