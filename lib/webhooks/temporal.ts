import { randomUUID } from 'node:crypto';
import {
  type DeliverWebhookInput,
  deliverWebhook,
  oneAttemptDeliveryWorkflowId,
} from '../../workflows/deliverWebhook.ts';
import type { WorkflowStarter } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { WebhookDeliverer } from './attempts.ts';

// The family's workflow adapter: what its domain functions tell its workflows, through Temporal.
// Workflows are started by their function and signalled by their defineSignal values, so a name
// and its arguments are checked by the compiler; importing a workflow module here only defines
// functions and signal values (its activity proxies are inert outside a worker). Built once per
// API process by lib/family-workflows.ts, reached as `services.workflows.<family>`.

/**
 * Test pings and redeliveries run the delivery workflow for one attempt and
 * wait for it: the caller gets the attempt, and the work stays on the workers.
 */
export function temporalWebhookDeliverer({ client, taskQueue }: WorkflowStarter): WebhookDeliverer {
  return {
    deliverNow: async (tenant, { eventId, webhookId, trigger }) => {
      const input: DeliverWebhookInput = { eventId, webhookId, trigger, retryScheduleMs: [] };
      return client.workflow.execute(deliverWebhook, {
        taskQueue,
        workflowId: oneAttemptDeliveryWorkflowId(trigger, webhookId, randomUUID()),
        ...workflowLabels(tenant, 'webhook', webhookId),
        args: [input],
        // One attempt takes at most WEBHOOK_TIMEOUT_MS (30 s cap); a worker that never picks it up ends the wait.
        workflowExecutionTimeout: '2 minutes',
      });
    },
  };
}
