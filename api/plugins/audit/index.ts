import type { Plugin } from '@hapi/hapi';
import { exportAuditRoute } from './export.ts';
import { listAuditRoute } from './list.ts';
import { verifyAuditRoute } from './verify.ts';

export const auditPlugin: Plugin<void> = {
  name: 'valise-audit',
  register(server) {
    server.route([listAuditRoute, exportAuditRoute, verifyAuditRoute]);
  },
};
