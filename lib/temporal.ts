import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { KeyLifecycle } from './api-keys/lifecycle.ts';
import type { Config } from './config.ts';
import type { TransferLifecycle } from './transfers/lifecycle.ts';

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

export function temporalLifecycles(client: Client, taskQueue: string) {
  return { keys: temporalKeyLifecycle(client, taskQueue), transfers: temporalTransferLifecycle(client, taskQueue) };
}
