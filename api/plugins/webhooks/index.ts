import type { Plugin } from '@hapi/hapi';
import { createRoute } from './create.ts';
import { deliveriesRoute } from './deliveries.ts';
import { eventCatalogRoute } from './events.ts';
import { listRoute } from './list.ts';
import { redeliverRoute } from './redeliver.ts';
import { removeRoute } from './remove.ts';
import { rotateSecretRoute } from './rotate-secret.ts';
import { testRoute } from './test.ts';
import { updateRoute } from './update.ts';

export const webhooksPlugin: Plugin<void> = {
  name: 'valise-webhooks',
  register(server) {
    server.route([
      eventCatalogRoute,
      listRoute,
      createRoute,
      updateRoute,
      removeRoute,
      rotateSecretRoute,
      deliveriesRoute,
      testRoute,
      redeliverRoute,
    ]);
  },
};
