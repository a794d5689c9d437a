import {
  approvalDecidedSignal,
  expiryExtendedSignal,
  fileUploadedSignal,
  revokedSignal,
  transferLifecycle,
  transferWorkflowId,
} from '../../workflows/transferLifecycle.ts';
import type { WorkflowStarter } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { TransferLifecycle } from './lifecycle.ts';

// The family's workflow adapter: what its domain functions tell its workflows, through Temporal.
// Workflows are started by their function and signalled by their defineSignal values, so a name
// and its arguments are checked by the compiler; importing a workflow module here only defines
// functions and signal values (its activity proxies are inert outside a worker). Built once per
// API process by lib/family-workflows.ts, reached as `services.workflows.<family>`.

/** The transfer workflow is started with the transfer and told what happens to it by signals. */
export function temporalTransferLifecycle({ client, taskQueue }: WorkflowStarter): TransferLifecycle {
  const handle = (transferId: string) => client.workflow.getHandle(transferWorkflowId(transferId));
  return {
    start: async (tenant, transferId) => {
      await client.workflow.start(transferLifecycle, {
        taskQueue,
        workflowId: transferWorkflowId(transferId),
        ...workflowLabels(tenant, 'transfer', transferId),
        args: [{ transferId }],
      });
    },
    fileUploaded: (transferId, fileId) => handle(transferId).signal(fileUploadedSignal, fileId),
    revoked: (transferId) => handle(transferId).signal(revokedSignal),
    approvalDecided: (transferId, decision) => handle(transferId).signal(approvalDecidedSignal, decision),
    expiryExtended: (transferId, expiresAt) => handle(transferId).signal(expiryExtendedSignal, expiresAt.toISOString()),
  };
}
