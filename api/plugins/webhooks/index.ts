import type { Plugin } from '@hapi/hapi';
import { eventCatalogRoute } from './events.ts';

export const webhooksPlugin: Plugin<void> = {
  name: 'valise-webhooks',
  register(server) {
    server.route([eventCatalogRoute]);
  },
};
