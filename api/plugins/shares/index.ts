import Boom from '@hapi/boom';
import type { Lifecycle, Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { archiveRoute } from './archive.ts';
import { archiveLinkRoute } from './archive-link.ts';
import { DOWNLOAD_SAFETY_HEADERS, downloadRoute } from './download.ts';
import { linksRoute } from './links.ts';
import { pageDownloadRoute, pageRoute } from './page.ts';
import { unlockRoute } from './unlock.ts';
import { viewRoute } from './view.ts';

export const sharesPlugin: Plugin<void> = {
  name: 'valise-shares',
  register(server) {
    server.route([
      viewRoute,
      unlockRoute,
      linksRoute,
      downloadRoute,
      pageRoute,
      pageDownloadRoute,
      archiveLinkRoute,
      archiveRoute,
    ]);
    // After the server's own onPreResponse has rendered errors: every answer of a
    // download link, its errors too, carries the download safety headers.
    server.ext('onPreResponse', downloadSafety, { sandbox: 'plugin' });
  },
};

function downloadSafety(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
  if (request.route.path !== downloadRoute.path && request.route.path !== archiveRoute.path) return h.continue;
  const response = request.response;
  for (const [name, value] of Object.entries(DOWNLOAD_SAFETY_HEADERS)) {
    if (Boom.isBoom(response)) response.output.headers[name] = value;
    else response.header(name, value);
  }
  return h.continue;
}
