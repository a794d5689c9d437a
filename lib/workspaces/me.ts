import type { Caller } from '../api-keys/present.ts';
import { createWorkspaceQueries } from '../db/queries/workspaces.ts';
import { notFound } from '../errors.ts';
import type { Services } from '../services.ts';

export async function describeCaller(services: Services, caller: Caller) {
  const queries = createWorkspaceQueries(services.db);
  const [workspace, user] = await Promise.all([
    queries.findWorkspace(caller.workspaceId),
    queries.findUser(caller.workspaceId, caller.userId),
  ]);
  if (!workspace || !user) throw notFound('workspace');
  return {
    object: 'me' as const,
    workspace: { id: workspace.id, name: workspace.name },
    user: { id: user.id, email: user.email, role: user.role },
    environment: caller.environment,
    api_key: { id: caller.apiKeyId, key_type: caller.keyType },
    scopes: caller.keyType === 'full' ? ['*'] : caller.scopes,
  };
}
