import { coffreInvitation, coffreInvitationWorkflowId } from '../../workflows/coffreInvitation.ts';
import { fileLifecycle, storedFilesDeletedSignal, storedFileUploadedSignal } from '../../workflows/fileLifecycle.ts';
import { coffreItemWorkflowId, coffreWorkflowId } from '../../workflows/ids.ts';
import { expiryChangedSignal, ownerDeletedSignal, ownerExpiry } from '../../workflows/ownerExpiry.ts';
import { startedOnce, type WorkflowStarter } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { CoffreLifecycle } from './lifecycle.ts';

// The family's workflow adapter: what its domain functions tell its workflows, through Temporal.
// Workflows are started by their function and signalled by their defineSignal values, so a name
// and its arguments are checked by the compiler; importing a workflow module here only defines
// functions and signal values (its activity proxies are inert outside a worker). Built once per
// API process by lib/family-workflows.ts, reached as `services.workflows.<family>`.

/** A vault's expiry workflow, one workflow per item, one short run per invitation mail (docs/coffres.md). */
export function temporalCoffreLifecycle({ client, taskQueue }: WorkflowStarter): CoffreLifecycle {
  const coffre = (coffreId: string) => client.workflow.getHandle(coffreWorkflowId(coffreId));
  const item = (itemId: string) => client.workflow.getHandle(coffreItemWorkflowId(itemId));
  return {
    watchExpiry: async (tenant, coffreId) => {
      await client.workflow.signalWithStart(ownerExpiry, {
        taskQueue,
        workflowId: coffreWorkflowId(coffreId),
        ...workflowLabels(tenant, 'coffre', coffreId),
        args: [{ family: 'coffres', ownerId: coffreId }],
        signal: expiryChangedSignal,
        signalArgs: [],
      });
    },
    coffreDeleted: async (coffreId) => {
      // A vault that never had an expiry has no workflow: nothing to tell.
      await coffre(coffreId)
        .signal(ownerDeletedSignal)
        .catch(() => undefined);
    },
    sendInvitation: (tenant, memberId, nonce) =>
      startedOnce(
        client.workflow.start(coffreInvitation, {
          taskQueue,
          workflowId: coffreInvitationWorkflowId(memberId, nonce),
          ...workflowLabels(tenant, 'coffre_member', memberId),
          args: [{ memberId, nonce }],
        }),
      ),
    startItem: async (tenant, itemId) => {
      await client.workflow.start(fileLifecycle, {
        taskQueue,
        workflowId: coffreItemWorkflowId(itemId),
        ...workflowLabels(tenant, 'coffre_item', itemId),
        args: [{ family: 'coffres', ownerId: itemId }],
      });
    },
    // The item is its own single file.
    itemUploaded: (itemId) => item(itemId).signal(storedFileUploadedSignal, itemId),
    itemDeleted: (itemId) => item(itemId).signal(storedFilesDeletedSignal),
  };
}
