import { readFile } from 'node:fs/promises';
import { defineRoute } from '../../route.ts';
import { secureHtml } from './security.ts';

// The sender page at /send. It is
// static: the API key is typed into the page and used only by its script.

const SEND_PAGE = new URL('../../../web/send.html', import.meta.url);

export const sendPageRoute = defineRoute({
  method: 'GET',
  path: '/send',
  options: { auth: false, description: 'Sender page', tags: ['web'] },
  handler: async (request, h) =>
    secureHtml(h.response(await readFile(SEND_PAGE, 'utf8')), request.server.app.services.config.api.publicBaseUrl),
});
