import type { Plugin } from '@hapi/hapi';
import { acceptancesRoute } from './acceptances.ts';
import { createExportRoute } from './create-export.ts';
import { downloadExportRoute } from './download.ts';
import { getExportRoute } from './get-export.ts';
import { latestExportRoute } from './latest-export.ts';

export const gdprPlugin: Plugin<void> = {
  name: 'valise-gdpr',
  register(server) {
    server.route([acceptancesRoute, createExportRoute, getExportRoute, latestExportRoute, downloadExportRoute]);
  },
};
