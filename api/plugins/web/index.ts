import type { Plugin } from '@hapi/hapi';
import { assetsRoute } from './assets.ts';
import { docsRoute } from './docs.ts';
import { intakePageRoute } from './intake-page.ts';
import { sendPageRoute } from './send-page.ts';

export const webPlugin: Plugin<void> = {
  name: 'valise-web',
  register(server) {
    server.route([assetsRoute, sendPageRoute, intakePageRoute, docsRoute]);
  },
};
