import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { KeyLifecycle } from './api-keys/lifecycle.ts';
import type { Config } from './config.ts';

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
