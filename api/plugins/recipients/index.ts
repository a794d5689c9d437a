import type { Plugin } from '@hapi/hapi';
import { createRoute } from './create.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';
import { removeRoute } from './remove.ts';
import { transferRecipientsRoute } from './transfer-recipients.ts';
import { updateRoute } from './update.ts';

export const recipientsPlugin: Plugin<void> = {
  name: 'valise-recipients',
  register(server) {
    server.route([listRoute, createRoute, getRoute, updateRoute, removeRoute, transferRecipientsRoute]);
  },
};
