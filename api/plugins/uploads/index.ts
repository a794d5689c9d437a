import type { Plugin } from '@hapi/hapi';
import { putRoute } from './put.ts';
import { statusRoute } from './status.ts';

export const uploadsPlugin: Plugin<void> = {
  name: 'valise-uploads',
  register(server) {
    server.route([putRoute, statusRoute]);
  },
};
