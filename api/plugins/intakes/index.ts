import type { Plugin } from '@hapi/hapi';
import { closeRoute } from './close.ts';
import { createRoute } from './create.ts';
import { documentsGetRoute } from './documents-get.ts';
import { documentsListRoute } from './documents-list.ts';
import { documentsRemoveRoute } from './documents-remove.ts';
import { downloadRoute } from './download.ts';
import { formRoute } from './form.ts';
import { getRoute } from './get.ts';
import { keysCreateRoute } from './keys-create.ts';
import { keysListRoute } from './keys-list.ts';
import { keysRevokeRoute } from './keys-revoke.ts';
import { listRoute } from './list.ts';
import { removeRoute } from './remove.ts';
import { submitRoute } from './submit.ts';
import { updateRoute } from './update.ts';

// Secure intakes (docs/intakes.md): the owner's routes (API keys, `intake:*`
// scopes), the submitter's (publishable keys), and the documents' downloads.
export const intakesPlugin: Plugin<void> = {
  name: 'valise-intakes',
  register(server) {
    server.route([
      createRoute,
      listRoute,
      getRoute,
      updateRoute,
      closeRoute,
      removeRoute,
      documentsListRoute,
      documentsGetRoute,
      documentsRemoveRoute,
      keysCreateRoute,
      keysListRoute,
      keysRevokeRoute,
      formRoute,
      submitRoute,
      downloadRoute,
    ]);
  },
};
