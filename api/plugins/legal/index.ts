import type { Plugin } from '@hapi/hapi';
import { acceptRoute } from './accept.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';

export const legalPlugin: Plugin<void> = {
  name: 'valise-legal',
  register(server) {
    server.route([listRoute, getRoute, acceptRoute]);
  },
};
