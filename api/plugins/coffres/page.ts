import { readFile } from 'node:fs/promises';
import { defineRoute } from '../../route.ts';
import { secureHtml } from '../web/security.ts';
import { invitationParams } from './schemas.ts';

// The page behind an invitation link (docs/coffres.md, "The page"): static;
// its script (web/coffre.js) reads the token from the address and uses the
// /v1/coffre-access/{token} routes. The token never leaves this origin: the
// page sends no referrer.

const PAGE = new URL('../../../web/coffre.html', import.meta.url);

export const pageRoute = defineRoute({
  method: 'GET',
  path: '/v/{token}',
  options: {
    auth: false,
    description: 'Vault page (invitation link)',
    tags: ['web'],
    validate: { params: invitationParams },
  },
  handler: async (request, h) =>
    secureHtml(h.response(await readFile(PAGE, 'utf8')), request.server.app.services.config.api.publicBaseUrl),
});
