import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  type ScheduleOptions,
  ScheduleOverlapPolicy,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
// Workflows are started by their function and signalled by their defineSignal
// values, so a name and its arguments are checked by the compiler. Importing a
// workflow module here only defines functions and signal values: its activity
// proxies are inert outside a worker, and nothing of it runs in this process.
import { coffreInvitation } from '../workflows/coffreInvitation.ts';
import { type DeliverWebhookInput, deliverWebhook } from '../workflows/deliverWebhook.ts';
import { endKeyRotationGrace } from '../workflows/endKeyRotationGrace.ts';
import { expireApiKey } from '../workflows/expireApiKey.ts';
import { fileLifecycle, storedFilesDeletedSignal, storedFileUploadedSignal } from '../workflows/fileLifecycle.ts';
import { gdprExport } from '../workflows/gdprExport.ts';
import {
  apiKeyExpiryWorkflowId,
  coffreInvitationWorkflowId,
  coffreItemWorkflowId,
  coffreWorkflowId,
  DEFAULT_TASK_QUEUE,
  gdprExportWorkflowId,
  intakeDocumentWorkflowId,
  intakeWorkflowId,
  oneAttemptDeliveryWorkflowId,
  rotationGraceWorkflowId,
  sandboxPurgeScheduleId,
  sandboxPurgeWorkflowId,
  transferWorkflowId,
} from '../workflows/ids.ts';
import { expiryChangedSignal, ownerDeletedSignal, ownerExpiry } from '../workflows/ownerExpiry.ts';
import { type PurgeSandboxInput, purgeSandbox } from '../workflows/purgeSandbox.ts';
import {
  approvalDecidedSignal,
  expiryExtendedSignal,
  fileUploadedSignal,
  revokedSignal,
  transferLifecycle,
} from '../workflows/transferLifecycle.ts';
import type { KeyLifecycle } from './api-keys/lifecycle.ts';
import type { CoffreLifecycle } from './coffres/lifecycle.ts';
import type { Config } from './config.ts';
import type { GdprExportLifecycle } from './gdpr/lifecycle.ts';
import type { IntakeLifecycle } from './intakes/lifecycle.ts';
import type { TransferLifecycle } from './transfers/lifecycle.ts';
import type { WebhookDeliverer } from './webhooks/attempts.ts';

export async function connectTemporal(config: Config): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Resolves once the workflow is started, or found started already under its id. */
export async function startedOnce(starting: Promise<unknown>): Promise<void> {
  try {
    await starting;
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Workflow ids are derived from the resource, so scheduling twice starts one timer. */
export function temporalKeyLifecycle(client: Client, taskQueue: string): KeyLifecycle {
  return {
    scheduleExpiry: (apiKeyId, expiresAt) =>
      startedOnce(
        client.workflow.start(expireApiKey, {
          taskQueue,
          workflowId: apiKeyExpiryWorkflowId(apiKeyId),
          args: [{ apiKeyId, expiresAt: expiresAt.toISOString() }],
        }),
      ),
    scheduleGraceEnd: (secretId, validUntil) =>
      startedOnce(
        client.workflow.start(endKeyRotationGrace, {
          taskQueue,
          workflowId: rotationGraceWorkflowId(secretId),
          args: [{ secretId, validUntil: validUntil.toISOString() }],
        }),
      ),
  };
}

/** The transfer workflow is started with the transfer and told what happens to it by signals. */
export function temporalTransferLifecycle(client: Client, taskQueue: string): TransferLifecycle {
  const handle = (transferId: string) => client.workflow.getHandle(transferWorkflowId(transferId));
  return {
    start: async (transferId) => {
      await client.workflow.start(transferLifecycle, {
        taskQueue,
        workflowId: transferWorkflowId(transferId),
        args: [{ transferId }],
      });
    },
    fileUploaded: (transferId, fileId) => handle(transferId).signal(fileUploadedSignal, fileId),
    revoked: (transferId) => handle(transferId).signal(revokedSignal),
    approvalDecided: (transferId, decision) => handle(transferId).signal(approvalDecidedSignal, decision),
    expiryExtended: (transferId, expiresAt) => handle(transferId).signal(expiryExtendedSignal, expiresAt.toISOString()),
  };
}

/**
 * Test pings and redeliveries run the delivery workflow for one attempt and
 * wait for it: the caller gets the attempt, and the work stays on the workers.
 */
export function temporalWebhookDeliverer(client: Client, taskQueue: string): WebhookDeliverer {
  return {
    deliverNow: async ({ eventId, webhookId, trigger }) => {
      const input: DeliverWebhookInput = { eventId, webhookId, trigger, retryScheduleMs: [] };
      return client.workflow.execute(deliverWebhook, {
        taskQueue,
        workflowId: oneAttemptDeliveryWorkflowId(trigger, webhookId, randomUUID()),
        args: [input],
        // One attempt takes at most WEBHOOK_TIMEOUT_MS (30 s cap); a worker that never picks it up ends the wait.
        workflowExecutionTimeout: '2 minutes',
      });
    },
  };
}

/** An intake's expiry workflow and one workflow per document (docs/intakes.md). */
export function temporalIntakeLifecycle(client: Client, taskQueue: string): IntakeLifecycle {
  const intake = (intakeId: string) => client.workflow.getHandle(intakeWorkflowId(intakeId));
  const document = (documentId: string) => client.workflow.getHandle(intakeDocumentWorkflowId(documentId));
  return {
    watchExpiry: async (intakeId) => {
      await client.workflow.signalWithStart(ownerExpiry, {
        taskQueue,
        workflowId: intakeWorkflowId(intakeId),
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
    startDocument: async (documentId) => {
      await client.workflow.start(fileLifecycle, {
        taskQueue,
        workflowId: intakeDocumentWorkflowId(documentId),
        args: [{ family: 'intakes', ownerId: documentId }],
      });
    },
    fileUploaded: (documentId, fileId) => document(documentId).signal(storedFileUploadedSignal, fileId),
    documentDeleted: (documentId) => document(documentId).signal(storedFilesDeletedSignal),
  };
}

/** A vault's expiry workflow, one workflow per item, one short run per invitation mail (docs/coffres.md). */
export function temporalCoffreLifecycle(client: Client, taskQueue: string): CoffreLifecycle {
  const coffre = (coffreId: string) => client.workflow.getHandle(coffreWorkflowId(coffreId));
  const item = (itemId: string) => client.workflow.getHandle(coffreItemWorkflowId(itemId));
  return {
    watchExpiry: async (coffreId) => {
      await client.workflow.signalWithStart(ownerExpiry, {
        taskQueue,
        workflowId: coffreWorkflowId(coffreId),
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
    sendInvitation: (memberId, nonce) =>
      startedOnce(
        client.workflow.start(coffreInvitation, {
          taskQueue,
          workflowId: coffreInvitationWorkflowId(memberId, nonce),
          args: [{ memberId, nonce }],
        }),
      ),
    startItem: async (itemId) => {
      await client.workflow.start(fileLifecycle, {
        taskQueue,
        workflowId: coffreItemWorkflowId(itemId),
        args: [{ family: 'coffres', ownerId: itemId }],
      });
    },
    // The item is its own single file.
    itemUploaded: (itemId) => item(itemId).signal(storedFileUploadedSignal, itemId),
    itemDeleted: (itemId) => item(itemId).signal(storedFilesDeletedSignal),
  };
}

/** One workflow per GDPR export (docs/gdpr.md). */
export function temporalGdprExports(client: Client, taskQueue: string): GdprExportLifecycle {
  return {
    start: (exportId) =>
      startedOnce(
        client.workflow.start(gdprExport, {
          taskQueue,
          workflowId: gdprExportWorkflowId(exportId),
          args: [{ exportId }],
        }),
      ),
  };
}

export function temporalLifecycles(client: Client, taskQueue: string) {
  return {
    keys: temporalKeyLifecycle(client, taskQueue),
    transfers: temporalTransferLifecycle(client, taskQueue),
    intakes: temporalIntakeLifecycle(client, taskQueue),
    webhooks: temporalWebhookDeliverer(client, taskQueue),
    coffres: temporalCoffreLifecycle(client, taskQueue),
    gdprExports: temporalGdprExports(client, taskQueue),
  };
}

/**
 * Creates the `sandbox-purge` schedule (workflows/ids.ts), or brings an existing one to this
 * worker's interval and task queue: every worker calls it at start, so whichever starts first
 * creates it and the others find it. A firing while the last run still purges is skipped.
 * Answers the schedule's id.
 */
export async function ensureSandboxPurgeSchedule(
  client: Client,
  config: Pick<Config, 'temporal' | 'sandboxPurge'>,
): Promise<string> {
  const scheduleId = sandboxPurgeScheduleId(config.temporal.taskQueue);
  const options = {
    scheduleId,
    spec: { intervals: [{ every: config.sandboxPurge.intervalMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: purgeSandbox,
      workflowId: sandboxPurgeWorkflowId(scheduleId),
      taskQueue: config.temporal.taskQueue,
      args: [{}] as [PurgeSandboxInput],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  } satisfies ScheduleOptions;
  try {
    await client.schedule.create(options);
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(scheduleId).update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: { ...previous.policies, ...options.policies },
    }));
  }
  return scheduleId;
}

/**
 * Deletes the schedule `ensureSandboxPurgeSchedule` made for a task queue other than the default
 * one, when its worker stops: a test run's schedule would otherwise fire for ever at a queue no
 * one polls. The default queue's schedule stays, for the next worker.
 */
export async function dropTestSandboxPurgeSchedule(client: Client, config: Pick<Config, 'temporal'>): Promise<void> {
  const scheduleId = sandboxPurgeScheduleId(config.temporal.taskQueue);
  if (scheduleId === sandboxPurgeScheduleId(DEFAULT_TASK_QUEUE)) return;
  await client.schedule
    .getHandle(scheduleId)
    .delete()
    .catch(() => undefined);
}
