import { endKeyRotationGrace, rotationGraceWorkflowId } from '../../workflows/endKeyRotationGrace.ts';
import { apiKeyExpiryWorkflowId, expireApiKey } from '../../workflows/expireApiKey.ts';
import { startedOnce, type WorkflowStarter } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { KeyLifecycle } from './lifecycle.ts';

// The family's workflow adapter: what its domain functions tell its workflows, through Temporal.
// Workflows are started by their function and signalled by their defineSignal values, so a name
// and its arguments are checked by the compiler; importing a workflow module here only defines
// functions and signal values (its activity proxies are inert outside a worker). Built once per
// API process by lib/family-workflows.ts, reached as `services.workflows.<family>`.

/** Workflow ids are derived from the resource, so scheduling twice starts one timer. */
export function temporalKeyLifecycle({ client, taskQueue }: WorkflowStarter): KeyLifecycle {
  return {
    scheduleExpiry: (tenant, apiKeyId, expiresAt) =>
      startedOnce(
        client.workflow.start(expireApiKey, {
          taskQueue,
          workflowId: apiKeyExpiryWorkflowId(apiKeyId),
          ...workflowLabels(tenant, 'api_key', apiKeyId),
          args: [{ apiKeyId, expiresAt: expiresAt.toISOString() }],
        }),
      ),
    scheduleGraceEnd: (tenant, secretId, validUntil) =>
      startedOnce(
        client.workflow.start(endKeyRotationGrace, {
          taskQueue,
          workflowId: rotationGraceWorkflowId(secretId),
          ...workflowLabels(tenant, 'api_key_secret', secretId),
          args: [{ secretId, validUntil: validUntil.toISOString() }],
        }),
      ),
  };
}
