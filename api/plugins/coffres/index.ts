import type { Plugin } from '@hapi/hapi';
import { accessArchiveLinkRoute } from './access-archive-link.ts';
import { accessDownloadLinkRoute } from './access-download-link.ts';
import { accessItemsRoute } from './access-items.ts';
import { accessLogRoute } from './access-log.ts';
import { accessUploadRoute } from './access-upload.ts';
import { accessViewRoute } from './access-view.ts';
import { archiveRoute } from './archive.ts';
import { archiveDownloadRoute } from './archive-download.ts';
import { createRoute } from './create.ts';
import { downloadRoute } from './download.ts';
import { getRoute } from './get.ts';
import { itemsCreateRoute } from './items-create.ts';
import { itemsGetRoute } from './items-get.ts';
import { itemsListRoute } from './items-list.ts';
import { itemsRemoveRoute } from './items-remove.ts';
import { listRoute } from './list.ts';
import { membersCreateRoute } from './members-create.ts';
import { membersInvitationRoute } from './members-invitation.ts';
import { membersListRoute } from './members-list.ts';
import { membersRemoveRoute } from './members-remove.ts';
import { membersUpdateRoute } from './members-update.ts';
import { pageRoute } from './page.ts';
import { removeRoute } from './remove.ts';
import { updateRoute } from './update.ts';

export const coffresPlugin: Plugin<void> = {
  name: 'valise-coffres',
  register(server) {
    server.route([
      listRoute,
      createRoute,
      getRoute,
      updateRoute,
      removeRoute,
      membersCreateRoute,
      membersListRoute,
      membersUpdateRoute,
      membersRemoveRoute,
      membersInvitationRoute,
      itemsCreateRoute,
      itemsListRoute,
      itemsGetRoute,
      itemsRemoveRoute,
      accessLogRoute,
      archiveRoute,
      accessViewRoute,
      accessItemsRoute,
      accessDownloadLinkRoute,
      accessUploadRoute,
      accessArchiveLinkRoute,
      downloadRoute,
      archiveDownloadRoute,
      pageRoute,
    ]);
  },
};
