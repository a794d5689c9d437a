import type { Plugin } from '@hapi/hapi';
import { createRoute } from './create.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';
import { revokeRoute } from './revoke.ts';
import { rotateRoute } from './rotate.ts';
import { updateRoute } from './update.ts';

export const apiKeysPlugin: Plugin<void> = {
  name: 'valise-api-keys',
  register(server) {
    server.route([createRoute, listRoute, getRoute, updateRoute, revokeRoute, rotateRoute]);
  },
};
