import type { CommonQueryMethods } from 'slonik';
import { createAuditQueries } from '../db/queries/audit.ts';
import { createEventQueries } from '../db/queries/events.ts';
import type { WebhookRow } from '../db/queries/webhooks.ts';

/**
 * What turning a failing webhook off leaves behind (docs/webhooks.md, "Automatic disabling"): a
 * `webhook.disabled` event for the workspace's other webhooks and an audit entry. Call it on the
 * transaction that disabled it.
 */
export async function recordWebhookDisabled(tx: CommonQueryMethods, hook: WebhookRow): Promise<void> {
  const tenant = { workspaceId: hook.workspace_id, environment: hook.environment };
  await createEventQueries(tx).record(tenant, 'webhook.disabled', {
    webhook: { id: hook.id, url: hook.url, failure_count: hook.failure_count, last_status: hook.last_status },
    reason: 'failing',
    failing_since: (hook.failing_since ?? new Date()).toISOString(),
  });
  await createAuditQueries(tx).insertSystem({
    ...tenant,
    action: 'webhook.disable',
    resourceType: 'webhook',
    resourceId: hook.id,
    metadata: { reason: 'failing', failing_since: hook.failing_since?.toISOString() ?? null },
  });
}
