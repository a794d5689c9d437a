import type { Plugin } from '@hapi/hapi';
import { approveRoute } from './approve.ts';
import { archiveRoute } from './archive.ts';
import { createRoute } from './create.ts';
import { deleteFolderRoute, putFolderRoute } from './folder.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';
import { revokeRoute } from './revoke.ts';
import { updateRoute } from './update.ts';

export const transfersPlugin: Plugin<void> = {
  name: 'valise-transfers',
  register(server) {
    server.route([
      createRoute,
      listRoute,
      getRoute,
      updateRoute,
      revokeRoute,
      approveRoute,
      putFolderRoute,
      deleteFolderRoute,
      archiveRoute,
    ]);
  },
};
