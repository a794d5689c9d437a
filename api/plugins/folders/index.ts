import type { Plugin } from '@hapi/hapi';
import { createRoute } from './create.ts';
import { listRoute } from './list.ts';

export const foldersPlugin: Plugin<void> = {
  name: 'valise-folders',
  register(server) {
    server.route([createRoute, listRoute]);
  },
};
