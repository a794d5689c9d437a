import { ScimError, type ScimPatchOperation, scimPatch } from 'scim-patch';
import { createEventQueries } from '../db/queries/events.ts';
import { createScimQueries, type ScimUserRow } from '../db/queries/scim.ts';
import { filterToSql, USER_FILTER } from '../db/queries/scim-filter.ts';
import { notFound } from '../errors.ts';
import { memberEventView } from '../events/member-events.ts';
import type { Services } from '../services.ts';
import { deleteScimMember, refuseOwner, revokeMemberKeys } from './deprovision.ts';
import {
  isResourceId,
  type Projection,
  presentUser,
  project,
  projectionOf,
  SCHEMA,
  type ScimResource,
  scimBadRequest,
  uniqueness,
  userFieldsOf,
} from './resources.ts';
import type { ScimCaller } from './tokens.ts';

// /v1/scim/Users (RFC 7644 §3): the workspace's members as SCIM Users. Members are
// workspace-level, so every query is confined to the token's workspace; the member.* events are
// recorded in the token's environment (docs/scim.md).

/** What a SCIM list takes in its query (RFC 7644 §3.4.2). */
export type ScimListQuery = {
  filter?: string | undefined;
  startIndex?: number | undefined;
  count?: number | undefined;
  attributes?: string | undefined;
  excludedAttributes?: string | undefined;
};

export type ScimProjectionQuery = Pick<ScimListQuery, 'attributes' | 'excludedAttributes'>;

/** The largest page a list answers, whatever `count` asks (ServiceProviderConfig filter.maxResults). */
export const SCIM_MAX_RESULTS = 200;
const DEFAULT_COUNT = 100;

export function windowOf(query: ScimListQuery) {
  const startIndex = Math.max(1, Math.trunc(query.startIndex ?? 1));
  const count = Math.min(SCIM_MAX_RESULTS, Math.max(0, Math.trunc(query.count ?? DEFAULT_COUNT)));
  // startIndex is echoed however large, but the offset goes to PostgreSQL as a bigint, which 1e+308
  // is not: any offset past MAX_SAFE_INTEGER is past every row anyway.
  return { startIndex, offset: Math.min(startIndex - 1, Number.MAX_SAFE_INTEGER), count };
}

export function listResponse(resources: ScimResource[], total: number, startIndex: number) {
  return {
    schemas: [SCHEMA.list],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

const USER_SCHEMAS = [SCHEMA.user, SCHEMA.enterprise];

function answer(row: ScimUserRow, services: Services, projection?: Projection) {
  const resource = presentUser(row, services.config.api.publicBaseUrl);
  return projection ? project(resource, projection, USER_SCHEMAS) : resource;
}

export async function listScimUsers(services: Services, caller: ScimCaller, query: ScimListQuery) {
  const where = filterToSql(USER_FILTER, query.filter);
  const window = windowOf(query);
  const { total, rows } = await createScimQueries(services.db).listUsers(caller.workspaceId, where, window);
  const projection = projectionOf(query);
  return listResponse(
    rows.map((row) => answer(row, services, projection)),
    total,
    window.startIndex,
  );
}

export async function getScimUser(services: Services, caller: ScimCaller, id: string, query: ScimProjectionQuery) {
  const row = isResourceId(id) ? await createScimQueries(services.db).findUser(caller.workspaceId, id) : null;
  if (!row) throw notFound('User');
  return answer(row, services, projectionOf(query));
}

export async function createScimUser(services: Services, caller: ScimCaller, resource: ScimResource) {
  const fields = userFieldsOf(resource);
  const row = await services.db.transaction(async (tx) => {
    const queries = createScimQueries(tx);
    const id = await unique(() => queries.insertUser(caller.workspaceId, fields));
    const created = await queries.findUser(caller.workspaceId, id);
    if (!created) throw notFound('User');
    await createEventQueries(tx).record(caller, 'member.created', { member: memberEventView(created) });
    return created;
  });
  return answer(row, services);
}

/** PUT: the whole resource replaced by what was sent (attributes left out are cleared). */
export async function replaceScimUser(services: Services, caller: ScimCaller, id: string, resource: ScimResource) {
  const fields = userFieldsOf(resource);
  return change(services, caller, id, () => fields);
}

/** PATCH (RFC 7644 §3.5.2): the operations applied to the resource as it is, then stored as a PUT would. */
export async function patchScimUser(services: Services, caller: ScimCaller, id: string, body: PatchBody) {
  const operations = patchOperations(body);
  return change(services, caller, id, (current) => {
    const patched = applyPatch(presentUser(current, services.config.api.publicBaseUrl), operations);
    return userFieldsOf(patched);
  });
}

export async function deleteScimUser(services: Services, caller: ScimCaller, id: string): Promise<void> {
  if (!isResourceId(id)) throw notFound('User');
  await services.db.transaction(async (tx) => {
    const member = await createScimQueries(tx).findUser(caller.workspaceId, id, { forUpdate: true });
    if (!member) throw notFound('User');
    await deleteScimMember(tx, caller, member);
  });
  services.credentials.forget();
}

async function change(
  services: Services,
  caller: ScimCaller,
  id: string,
  next: (current: ScimUserRow) => ReturnType<typeof userFieldsOf>,
) {
  if (!isResourceId(id)) throw notFound('User');
  const row = await services.db.transaction(async (tx) => {
    const queries = createScimQueries(tx);
    const current = await queries.findUser(caller.workspaceId, id, { forUpdate: true });
    if (!current) throw notFound('User');
    const fields = next(current);
    if (current.active && !fields.active) refuseOwner(current, 'deactivated');
    await unique(() => queries.replaceUser(caller.workspaceId, id, fields));
    const changed = await queries.findUser(caller.workspaceId, id);
    if (!changed) throw notFound('User');
    const events = createEventQueries(tx);
    const member = memberEventView(changed);
    if (current.active && !changed.active) {
      const revoked = await revokeMemberKeys(tx, caller.workspaceId, id);
      await events.record(caller, 'member.deactivated', { member, revoked_api_keys: revoked });
    } else if (!current.active && changed.active) {
      await events.record(caller, 'member.reactivated', { member });
    } else {
      await events.record(caller, 'member.updated', { member });
    }
    return changed;
  });
  services.credentials.forget();
  return answer(row, services);
}

/** 409 `uniqueness` when the workspace already has the userName or e-mail address. */
async function unique<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error))
      throw uniqueness('Another member of the workspace has this userName or e-mail address.');
    throw error;
  }
}

function isUniqueViolation(error: unknown): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if ((current as { code?: unknown }).code === '23505') return true;
  }
  return false;
}

export type PatchBody = { schemas: string[]; Operations: Array<{ op: string; path?: string; value?: unknown }> };

const PATCH_OPS = new Set(['add', 'remove', 'replace']);

/**
 * The operations as scim-patch takes them, from what identity providers send: `op` in any case
 * (Entra ID's "Replace"), and an operation without `path` whose value names attributes by path
 * (`{"name.givenName": …}`, `{"urn:…:enterprise:2.0:User:manager": …}`) split into one per attribute.
 */
export function patchOperations(body: PatchBody): ScimPatchOperation[] {
  if (!body.schemas.includes(SCHEMA.patch)) {
    throw scimBadRequest('invalidSyntax', `A PATCH request names the schema ${SCHEMA.patch}.`, 'schemas');
  }
  return body.Operations.flatMap((operation, index): ScimPatchOperation[] => {
    const op = operation.op.toLowerCase();
    if (!PATCH_OPS.has(op)) {
      throw scimBadRequest('invalidSyntax', `Operations[${index}].op must be add, remove or replace.`, 'Operations');
    }
    if (op === 'remove') {
      if (!operation.path) throw scimBadRequest('noTarget', `Operations[${index}]: remove needs a path.`, 'Operations');
      // Entra ID removes a group member with `path: "members"` and `[{"$ref": null, "value": id}]`:
      // matched by `value` alone, as a value path, not by the whole entry.
      const entries = Array.isArray(operation.value) ? (operation.value as unknown[]) : null;
      if (entries?.every((entry) => typeof (entry as { value?: unknown } | null)?.value === 'string')) {
        const path = operation.path;
        return entries.map((entry) => ({
          op: 'remove' as const,
          path: `${path}[value eq ${JSON.stringify((entry as { value: string }).value)}]`,
        }));
      }
      return [{ op: 'remove', path: operation.path }];
    }
    const kind = op as 'add' | 'replace';
    if (operation.path) return [{ op: kind, path: operation.path, value: operation.value }];
    const value = operation.value;
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw scimBadRequest(
        'invalidValue',
        `Operations[${index}]: without a path, value must be an object.`,
        'Operations',
      );
    }
    return Object.entries(value).map(([path, inner]) => ({ op: kind, path, value: inner }));
  });
}

export function applyPatch(resource: ScimResource, operations: ScimPatchOperation[]): ScimResource {
  try {
    return scimPatch(resource as never, operations, { mutateDocument: false, treatMissingAsAdd: true }) as ScimResource;
  } catch (error) {
    if (error instanceof ScimError) {
      throw scimBadRequest(error.scimCode ?? 'invalidValue', error.message || 'The PATCH operation cannot be applied.');
    }
    throw error;
  }
}
