import { listVisibleItems } from '../../../lib/coffres/access.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { invitationParams, visibleItemList } from './schemas.ts';

export const accessItemsRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffre-access/{token}/items',
  options: {
    id: 'coffres.listVisibleItems',
    auth: false,
    description: "List a vault's items with an invitation link",
    notes: 'The available items, newest first, whatever the member\u2019s access. Logged as `listed`.',
    tags: ['api', 'coffres'],
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    validate: { params: invitationParams },
    response: { schema: visibleItemList },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return listVisibleItems(services, request.params.token, clientIp(request, services.config));
  },
});
