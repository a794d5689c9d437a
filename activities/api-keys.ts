import { ApplicationFailure } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { createApiKeyQueries } from '../lib/db/queries/api-keys.ts';
import { createAuditQueries } from '../lib/db/queries/audit.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { apiKeyEventView } from '../lib/events/views.ts';

// Each activity is idempotent: its UPDATE matches only the first time, so a
// retry after a crash neither duplicates the event nor the audit entry.
export function createApiKeyActivities(deps: { db: DatabasePool }) {
  return {
    async markApiKeyExpired(apiKeyId: string): Promise<'expired' | 'nothing-to-do'> {
      return deps.db.transaction(async (tx) => {
        const key = await createApiKeyQueries(tx).markExpired(apiKeyId);
        if (!key) return assertDue(tx, apiKeyId);
        const tenant = { workspaceId: key.workspace_id, environment: key.environment };
        await createEventQueries(tx).record(tenant, 'api_key.expired', { api_key: apiKeyEventView(key) });
        await createAuditQueries(tx).insertSystem({
          ...tenant,
          apiKeyId: key.id,
          action: 'api_key.expired',
          resourceType: 'api_key',
          resourceId: key.id,
          metadata: { expires_at: key.expires_at?.toISOString() ?? null },
        });
        return 'expired';
      });
    },

    async retireRotatedKeyValue(secretId: string): Promise<'retired' | 'nothing-to-do'> {
      return deps.db.transaction(async (tx) => {
        const retired = await createApiKeyQueries(tx).retireSecret(secretId);
        if (!retired) return 'nothing-to-do';
        const key = await createApiKeyQueries(tx).findById(retired.apiKeyId);
        if (key) {
          await createAuditQueries(tx).insertSystem({
            workspaceId: key.workspace_id,
            environment: key.environment,
            apiKeyId: key.id,
            action: 'api_key.rotation_grace_ended',
            resourceType: 'api_key',
            resourceId: key.id,
          });
        }
        return 'retired';
      });
    },
  };
}

/** A timer can fire a hair before the database clock agrees; retrying then is correct. */
async function assertDue(tx: Parameters<Parameters<DatabasePool['transaction']>[0]>[0], apiKeyId: string) {
  const key = await createApiKeyQueries(tx).findById(apiKeyId);
  if (key?.expires_at && key.expired_at === null && key.expires_at.getTime() > Date.now()) {
    throw ApplicationFailure.retryable(`API key ${apiKeyId} is not due to expire yet`, 'NotDueYet');
  }
  return 'nothing-to-do' as const;
}
