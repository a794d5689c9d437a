import type { Plugin } from '@hapi/hapi';
import { healthRoute } from './health.ts';
import { meRoute } from './me.ts';
import { openApiRoute } from './openapi.ts';
import { welcomeRoute } from './welcome.ts';

export const metaPlugin: Plugin<void> = {
  name: 'valise-meta',
  register(server) {
    server.route([welcomeRoute, meRoute, healthRoute, openApiRoute]);
  },
};
