import type { Plugin } from '@hapi/hapi';
import { addTransfersRoute } from './add-transfers.ts';
import { createRoute } from './create.ts';
import { disableShareLinkRoute } from './disable-share-link.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';
import { pageArchiveRoute, pageFormRoute, pageRoute } from './page.ts';
import { removeRoute } from './remove.ts';
import { removeTransferRoute } from './remove-transfer.ts';
import { rotateShareLinkRoute } from './rotate-share-link.ts';
import { sharedArchiveLinkRoute } from './shared-archive-link.ts';
import { sharedLinksRoute } from './shared-download-links.ts';
import { sharedViewRoute } from './shared-view.ts';
import { updateRoute } from './update.ts';

export const collectionsPlugin: Plugin<void> = {
  name: 'valise-collections',
  register(server) {
    server.route([
      listRoute,
      createRoute,
      getRoute,
      updateRoute,
      removeRoute,
      addTransfersRoute,
      removeTransferRoute,
      rotateShareLinkRoute,
      disableShareLinkRoute,
      sharedViewRoute,
      sharedLinksRoute,
      pageRoute,
      pageFormRoute,
      sharedArchiveLinkRoute,
      pageArchiveRoute,
    ]);
  },
};
