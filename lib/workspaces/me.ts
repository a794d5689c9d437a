import { createWorkspaceQueries } from '../db/queries/workspaces.ts';
import { notFound } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Caller } from '../tenancy.ts';

/** Who is calling: from what authentication read with the key when it has it, else from the database. */
export async function describeCaller(services: Services, caller: Caller) {
  const known = caller.profile;
  const { workspace, user } = known
    ? {
        workspace: { id: caller.workspaceId, name: known.workspaceName },
        user: { id: caller.userId, email: known.userEmail, role: known.userRole },
      }
    : await readProfile(services, caller);
  return {
    object: 'me' as const,
    workspace: { id: workspace.id, name: workspace.name },
    user: { id: user.id, email: user.email, role: user.role },
    environment: caller.environment,
    api_key: { id: caller.apiKeyId, key_type: caller.keyType },
    scopes: caller.keyType === 'full' ? ['*'] : caller.scopes,
  };
}

async function readProfile(services: Services, caller: Caller) {
  const queries = createWorkspaceQueries(services.db);
  const [workspace, user] = await Promise.all([
    queries.findWorkspace(caller.workspaceId),
    queries.findUser(caller.workspaceId, caller.userId),
  ]);
  if (!workspace || !user) throw notFound('workspace');
  return { workspace, user };
}
