import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { DeliverWebhookInput, deliverWebhook } from '../workflows/deliverWebhook.ts';
import type { KeyLifecycle } from './api-keys/lifecycle.ts';
import type { Config } from './config.ts';
import type { TransferLifecycle } from './transfers/lifecycle.ts';
import type { WebhookDeliverer } from './webhooks/deliveries.ts';

export async function connectTemporal(config: Config): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Workflow ids are derived from the resource, so scheduling twice starts one timer. */
export function temporalKeyLifecycle(client: Client, taskQueue: string): KeyLifecycle {
  const startOnce = async (workflowType: string, workflowId: string, args: unknown[]) => {
    try {
      await client.workflow.start(workflowType, { taskQueue, workflowId, args });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  };
  return {
    scheduleExpiry: (apiKeyId, expiresAt) =>
      startOnce('expireApiKey', `api-key-expiry-${apiKeyId}`, [{ apiKeyId, expiresAt: expiresAt.toISOString() }]),
    scheduleGraceEnd: (secretId, validUntil) =>
      startOnce('endKeyRotationGrace', `api-key-rotation-grace-${secretId}`, [
        { secretId, validUntil: validUntil.toISOString() },
      ]),
  };
}

/** The transfer workflow is started with the transfer and told what happens to it by signals. */
export function temporalTransferLifecycle(client: Client, taskQueue: string): TransferLifecycle {
  const handle = (transferId: string) => client.workflow.getHandle(`transfer-${transferId}`);
  return {
    start: async (transferId) => {
      await client.workflow.start('transferLifecycle', {
        taskQueue,
        workflowId: `transfer-${transferId}`,
        args: [{ transferId }],
      });
    },
    fileUploaded: (transferId, fileId) => handle(transferId).signal('fileUploaded', fileId),
    revoked: (transferId) => handle(transferId).signal('revoked'),
    approvalDecided: (transferId, decision) => handle(transferId).signal('approvalDecided', decision),
    expiryExtended: (transferId, expiresAt) => handle(transferId).signal('expiryExtended', expiresAt.toISOString()),
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
      return client.workflow.execute<typeof deliverWebhook>('deliverWebhook', {
        taskQueue,
        workflowId: `webhook-${trigger}-${webhookId}-${randomUUID()}`,
        args: [input],
        // One attempt takes at most WEBHOOK_TIMEOUT_MS (30 s cap); a worker that never picks it up ends the wait.
        workflowExecutionTimeout: '2 minutes',
      });
    },
  };
}

export function temporalLifecycles(client: Client, taskQueue: string) {
  return {
    keys: temporalKeyLifecycle(client, taskQueue),
    transfers: temporalTransferLifecycle(client, taskQueue),
    webhooks: temporalWebhookDeliverer(client, taskQueue),
  };
}
