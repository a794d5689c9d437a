import type { CommonQueryMethods } from 'slonik';
import { createScimQueries, type ScimGroupRow } from '../db/queries/scim.ts';
import { filterToSql, GROUP_FILTER } from '../db/queries/scim-filter.ts';
import { notFound } from '../errors.ts';
import type { Services } from '../services.ts';
import {
  excludes,
  type GroupFields,
  groupFieldsOf,
  isResourceId,
  presentGroup,
  project,
  projectionOf,
  SCHEMA,
  type ScimResource,
  scimBadRequest,
} from './resources.ts';
import type { ScimCaller } from './tokens.ts';
import {
  applyPatch,
  listResponse,
  type PatchBody,
  patchOperations,
  type ScimListQuery,
  type ScimProjectionQuery,
  windowOf,
} from './users.ts';

// /v1/scim/Groups: groups of the workspace's members. A group's members are members of the same
// workspace; an id that names no member of it is refused (400 invalidValue), never linked.

const GROUP_SCHEMAS = [SCHEMA.group];

async function present(
  db: CommonQueryMethods,
  services: Services,
  rows: readonly ScimGroupRow[],
  withMembers: boolean,
): Promise<ScimResource[]> {
  const members = withMembers ? await createScimQueries(db).groupMembers(rows.map((row) => row.id)) : [];
  const baseUrl = services.config.api.publicBaseUrl;
  return rows.map((row) =>
    presentGroup(row, withMembers ? members.filter((m) => m.group_id === row.id) : null, baseUrl),
  );
}

export async function listScimGroups(services: Services, caller: ScimCaller, query: ScimListQuery) {
  const where = filterToSql(GROUP_FILTER, query.filter);
  const window = windowOf(query);
  const { total, rows } = await createScimQueries(services.db).listGroups(caller.workspaceId, where, window);
  const projection = projectionOf(query);
  // Entra ID lists groups with excludedAttributes=members: their members are then not even read.
  const resources = await present(services.db, services, rows, !excludes(projection, 'members'));
  return listResponse(
    resources.map((resource) => project(resource, projection, GROUP_SCHEMAS)),
    total,
    window.startIndex,
  );
}

export async function getScimGroup(services: Services, caller: ScimCaller, id: string, query: ScimProjectionQuery) {
  const row = isResourceId(id) ? await createScimQueries(services.db).findGroup(caller.workspaceId, id) : null;
  if (!row) throw notFound('Group');
  const projection = projectionOf(query);
  const [resource] = await present(services.db, services, [row], !excludes(projection, 'members'));
  return project(resource as ScimResource, projection, GROUP_SCHEMAS);
}

export async function createScimGroup(services: Services, caller: ScimCaller, resource: ScimResource) {
  const fields = groupFieldsOf(resource);
  return services.db.transaction(async (tx) => {
    const queries = createScimQueries(tx);
    const id = await queries.insertGroup(caller.workspaceId, fields.displayName, fields.externalId);
    await setMembers(tx, caller, id, fields.memberIds ?? []);
    return reread(tx, services, caller, id);
  });
}

export async function replaceScimGroup(services: Services, caller: ScimCaller, id: string, resource: ScimResource) {
  const fields = groupFieldsOf(resource);
  return change(services, caller, id, () => ({ ...fields, memberIds: fields.memberIds ?? [] }));
}

export async function patchScimGroup(services: Services, caller: ScimCaller, id: string, body: PatchBody) {
  const operations = patchOperations(body);
  return change(services, caller, id, (current) => {
    const fields = groupFieldsOf(applyPatch(current, operations));
    return { ...fields, memberIds: fields.memberIds ?? [] };
  });
}

export async function deleteScimGroup(services: Services, caller: ScimCaller, id: string): Promise<void> {
  if (!isResourceId(id) || !(await createScimQueries(services.db).deleteGroup(caller.workspaceId, id))) {
    throw notFound('Group');
  }
}

async function change(
  services: Services,
  caller: ScimCaller,
  id: string,
  next: (current: ScimResource) => GroupFields & { memberIds: string[] },
) {
  if (!isResourceId(id)) throw notFound('Group');
  return services.db.transaction(async (tx) => {
    const queries = createScimQueries(tx);
    const row = await queries.findGroup(caller.workspaceId, id, { forUpdate: true });
    if (!row) throw notFound('Group');
    const [current] = await present(tx, services, [row], true);
    const fields = next(current as ScimResource);
    await queries.updateGroup(caller.workspaceId, id, fields.displayName, fields.externalId);
    await setMembers(tx, caller, id, fields.memberIds);
    return reread(tx, services, caller, id);
  });
}

async function setMembers(tx: CommonQueryMethods, caller: ScimCaller, groupId: string, memberIds: readonly string[]) {
  const wanted = [...new Set(memberIds)];
  const found = new Set(await createScimQueries(tx).existingUserIds(caller.workspaceId, wanted));
  const unknown = wanted.find((userId) => !found.has(userId));
  if (unknown) throw scimBadRequest('invalidValue', `No member of this workspace has the id ${unknown}.`, 'members');
  await createScimQueries(tx).setGroupMembers(groupId, wanted);
}

async function reread(tx: CommonQueryMethods, services: Services, caller: ScimCaller, id: string) {
  const row = await createScimQueries(tx).findGroup(caller.workspaceId, id);
  if (!row) throw notFound('Group');
  const [resource] = await present(tx, services, [row], true);
  return resource as ScimResource;
}
