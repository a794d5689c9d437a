import type { Plugin } from '@hapi/hapi';
import { createRoute } from './create.ts';
import { executionsRoute } from './executions.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';
import { removeRoute } from './remove.ts';
import { updateRoute } from './update.ts';

export const rulesPlugin: Plugin<void> = {
  name: 'valise-rules',
  register(server) {
    server.route([listRoute, createRoute, getRoute, updateRoute, removeRoute, executionsRoute]);
  },
};
