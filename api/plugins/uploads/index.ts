import type { Plugin } from '@hapi/hapi';
import { tusCreateRoute } from './create.ts';
import { tusOptionsRoute } from './options.ts';
import { tusPatchRoute } from './patch.ts';
import { putRoute } from './put.ts';
import { statusRoute } from './status.ts';
import { tusTerminateRoute } from './terminate.ts';

export const uploadsPlugin: Plugin<void> = {
  name: 'valise-uploads',
  register(server) {
    server.route([putRoute, statusRoute, tusPatchRoute, tusCreateRoute, tusTerminateRoute, tusOptionsRoute]);
  },
};
