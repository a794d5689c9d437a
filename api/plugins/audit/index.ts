import type { Plugin } from '@hapi/hapi';
import { listAuditRoute } from './list.ts';

export const auditPlugin: Plugin<void> = {
  name: 'valise-audit',
  register(server) {
    server.route([listAuditRoute]);
  },
};
