import { viewCoffre } from '../../../lib/coffres/access.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { invitationParams, memberView } from './schemas.ts';

export const accessViewRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffre-access/{token}',
  options: {
    id: 'coffres.open',
    auth: false,
    description: 'Open a vault with an invitation link',
    notes:
      'No API key: the invitation token (`/v/{token}`) is the credential. The vault, the member\u2019s access and the ' +
      'available items. Logged as `opened`; a member\u2019s first open of the day (UTC) also records `coffre.accessed`. ' +
      '404 for an unknown token, 403 once revoked or replaced by a newer invitation, 410 once it or the vault expired.',
    tags: ['api', 'coffres'],
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    validate: { params: invitationParams },
    response: { schema: memberView },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return viewCoffre(services, request.params.token, clientIp(request, services.config));
  },
});
