import type { Plugin } from '@hapi/hapi';
import { analyticsFunnelRoute } from './funnel.ts';
import { analyticsGeoRoute } from './geo.ts';
import { analyticsHeatmapRoute } from './heatmap.ts';
import { analyticsSummaryRoute } from './summary.ts';
import { analyticsTopRecipientsRoute } from './top-recipients.ts';
import { analyticsTopTransfersRoute } from './top-transfers.ts';

export const analyticsPlugin: Plugin<void> = {
  name: 'valise-analytics',
  register(server) {
    server.route([
      analyticsSummaryRoute,
      analyticsGeoRoute,
      analyticsFunnelRoute,
      analyticsHeatmapRoute,
      analyticsTopTransfersRoute,
      analyticsTopRecipientsRoute,
    ]);
  },
};
