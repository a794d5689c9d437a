import type { DatabasePool } from 'slonik';
import { generateKeyValue, hashKeyValue } from '../api-keys/values.ts';
import { seal } from '../crypto/secrets.ts';
import { generateTotpSecret } from '../crypto/totp.ts';
import { createApiKeyQueries } from '../db/queries/api-keys.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createWorkspaceQueries } from '../db/queries/workspaces.ts';
import { apiKeyEventView } from '../events/views.ts';
import { ENVIRONMENTS, type Environment } from '../vocabulary.ts';

export type BootstrapResult = {
  workspace_id: string;
  user_id: string;
  mfa_secret: string;
  keys: Record<Environment, string>;
};

/** An operator's first step: a workspace, its owner (with a TOTP seed) and one full key per environment. */
export async function bootstrapWorkspace(
  db: DatabasePool,
  keys: { apiKeyPepper: Buffer; seal: Buffer },
  input: { workspaceName: string; ownerEmail: string },
): Promise<BootstrapResult> {
  const mfaSecret = generateTotpSecret();
  return db.transaction(async (tx) => {
    const workspaces = createWorkspaceQueries(tx);
    const workspace = await workspaces.insertWorkspace(input.workspaceName);
    const owner = await workspaces.insertUser(workspace.id, input.ownerEmail, 'owner', seal(keys.seal, mfaSecret));
    const values = {} as Record<Environment, string>;
    for (const environment of ENVIRONMENTS) {
      const apiKeys = createApiKeyQueries(tx);
      const { value, displayPrefix } = generateKeyValue(environment, 'full');
      const id = await apiKeys.insert({
        workspaceId: workspace.id,
        userId: owner.id,
        environment,
        name: `Bootstrap ${environment} key`,
        description: 'Created by `admin bootstrap`.',
        keyType: 'full',
        scopes: ['*'],
        allowedIps: [],
        maxUses: null,
        expiresAt: null,
      });
      await apiKeys.insertSecret(id, hashKeyValue(keys.apiKeyPepper, value), displayPrefix);
      const tenant = { workspaceId: workspace.id, environment };
      const created = await apiKeys.find(tenant, id);
      if (!created) throw new Error(`bootstrap: key ${id} vanished in its own transaction`);
      await createEventQueries(tx).record(tenant, 'api_key.created', { api_key: apiKeyEventView(created) });
      values[environment] = value;
    }
    return { workspace_id: workspace.id, user_id: owner.id, mfa_secret: mfaSecret, keys: values };
  });
}
