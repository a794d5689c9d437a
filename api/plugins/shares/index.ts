import type { Plugin } from '@hapi/hapi';
import { downloadRoute } from './download.ts';
import { linksRoute } from './links.ts';
import { pageDownloadRoute, pageRoute } from './page.ts';
import { viewRoute } from './view.ts';

export const sharesPlugin: Plugin<void> = {
  name: 'valise-shares',
  register(server) {
    server.route([viewRoute, linksRoute, downloadRoute, pageRoute, pageDownloadRoute]);
  },
};
