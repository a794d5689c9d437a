import { fileLifecycle, storedFilesDeletedSignal, storedFileUploadedSignal } from '../../workflows/fileLifecycle.ts';
import { intakeDocumentWorkflowId, intakeWorkflowId } from '../../workflows/ids.ts';
import { expiryChangedSignal, ownerDeletedSignal, ownerExpiry } from '../../workflows/ownerExpiry.ts';
import type { WorkflowStarter } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { IntakeLifecycle } from './lifecycle.ts';

// The family's workflow adapter: what its domain functions tell its workflows, through Temporal.
// Workflows are started by their function and signalled by their defineSignal values, so a name
// and its arguments are checked by the compiler; importing a workflow module here only defines
// functions and signal values (its activity proxies are inert outside a worker). Built once per
// API process by lib/family-workflows.ts, reached as `services.workflows.<family>`.

/** An intake's expiry workflow and one workflow per document (docs/intakes.md). */
export function temporalIntakeLifecycle({ client, taskQueue }: WorkflowStarter): IntakeLifecycle {
  const intake = (intakeId: string) => client.workflow.getHandle(intakeWorkflowId(intakeId));
  const document = (documentId: string) => client.workflow.getHandle(intakeDocumentWorkflowId(documentId));
  return {
    watchExpiry: async (tenant, intakeId) => {
      await client.workflow.signalWithStart(ownerExpiry, {
        taskQueue,
        workflowId: intakeWorkflowId(intakeId),
        ...workflowLabels(tenant, 'intake', intakeId),
        args: [{ family: 'intakes', ownerId: intakeId }],
        signal: expiryChangedSignal,
        signalArgs: [],
      });
    },
    intakeDeleted: async (intakeId) => {
      // An intake that never had an expiry has no workflow: nothing to tell.
      await intake(intakeId)
        .signal(ownerDeletedSignal)
        .catch(() => undefined);
    },
    startDocument: async (tenant, documentId) => {
      await client.workflow.start(fileLifecycle, {
        taskQueue,
        workflowId: intakeDocumentWorkflowId(documentId),
        ...workflowLabels(tenant, 'intake_document', documentId),
        args: [{ family: 'intakes', ownerId: documentId }],
      });
    },
    fileUploaded: (documentId, fileId) => document(documentId).signal(storedFileUploadedSignal, fileId),
    documentDeleted: (documentId) => document(documentId).signal(storedFilesDeletedSignal),
  };
}
