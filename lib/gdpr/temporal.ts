import { gdprExport, gdprExportWorkflowId } from '../../workflows/gdprExport.ts';
import { startedOnce, type WorkflowStarter } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { GdprExportLifecycle } from './lifecycle.ts';

// The family's workflow adapter: what its domain functions tell its workflows, through Temporal.
// Workflows are started by their function and signalled by their defineSignal values, so a name
// and its arguments are checked by the compiler; importing a workflow module here only defines
// functions and signal values (its activity proxies are inert outside a worker). Built once per
// API process by lib/family-workflows.ts, reached as `services.workflows.<family>`.

/** One workflow per GDPR export (docs/gdpr.md). */
export function temporalGdprExports({ client, taskQueue }: WorkflowStarter): GdprExportLifecycle {
  return {
    start: (tenant, exportId) =>
      startedOnce(
        client.workflow.start(gdprExport, {
          taskQueue,
          workflowId: gdprExportWorkflowId(exportId),
          ...workflowLabels(tenant, 'gdpr_export', exportId),
          args: [{ exportId }],
        }),
      ),
  };
}
