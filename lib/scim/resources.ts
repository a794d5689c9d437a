import type { ScimEmail, ScimGroupRow, ScimUserFields, ScimUserRow } from '../db/queries/scim.ts';
import { DomainError } from '../errors.ts';

// SCIM resources (RFC 7643) as they are sent and answered: reading a member or a group from what
// an identity provider sends, tolerating how the real ones send it (Entra ID's `"False"` strings),
// and presenting our rows as SCIM JSON.

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
} as const;

/** A SCIM resource as JSON: any members, read with the helpers below. */
export type ScimResource = Record<string, unknown>;

/** 400 with a SCIM `scimType` (RFC 7644 §3.12). */
export function scimBadRequest(scimType: string, detail: string, param: string | null = null) {
  return new DomainError('validation_error', detail, { param, details: { scimType } });
}

export function uniqueness(detail: string) {
  return new DomainError('validation_error', detail, { kind: 'conflict', details: { scimType: 'uniqueness' } });
}

/** A member by name, whatever its case (attribute names are case-insensitive). */
function member(resource: ScimResource, name: string): unknown {
  if (name in resource) return resource[name];
  const lower = name.toLowerCase();
  const key = Object.keys(resource).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : resource[key];
}

function object(resource: ScimResource, name: string): ScimResource {
  const value = member(resource, name);
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw scimBadRequest('invalidValue', `\`${name}\` must be an object.`, name);
  return value as ScimResource;
}

function optionalString(resource: ScimResource, name: string, path = name, max = 1024): string | null {
  const value = member(resource, name);
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw scimBadRequest('invalidValue', `\`${path}\` must be a string.`, path);
  }
  const text = String(value);
  if (text.length > max || text.includes('\u0000')) {
    throw scimBadRequest('invalidValue', `\`${path}\` is too long or holds a NUL character.`, path);
  }
  return text;
}

/** Entra ID sends booleans as the strings "True" and "False". */
export function booleanOf(value: unknown, path: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw scimBadRequest('invalidValue', `\`${path}\` must be true or false.`, path);
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function emailsOf(resource: ScimResource): ScimEmail[] {
  const value = member(resource, 'emails');
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > 20) {
    throw scimBadRequest('invalidValue', '`emails` must be a list of at most 20 addresses.', 'emails');
  }
  return value.map((entry, index) => {
    const path = `emails[${index}]`;
    if (!entry || typeof entry !== 'object')
      throw scimBadRequest('invalidValue', `\`${path}\` must be an object.`, path);
    const address = optionalString(entry as ScimResource, 'value', `${path}.value`, 320);
    if (!address || !EMAIL.test(address)) {
      throw scimBadRequest('invalidValue', `\`${path}.value\` must be an e-mail address.`, `${path}.value`);
    }
    const primary = member(entry as ScimResource, 'primary');
    return {
      value: address,
      type: optionalString(entry as ScimResource, 'type', `${path}.type`, 64),
      primary: primary === undefined || primary === null ? false : booleanOf(primary, `${path}.primary`),
    };
  });
}

/** The manager is `{value: id}` in RFC 7643; Entra ID also sends the bare id. */
function managerOf(extension: ScimResource): string | null {
  const value = member(extension, 'manager');
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return optionalString(value as ScimResource, 'value', 'manager.value', 256);
  }
  return optionalString(extension, 'manager', 'manager', 256);
}

/** A member's stored attributes from a full SCIM User (POST, PUT, or a patched resource). */
export function userFieldsOf(resource: ScimResource): ScimUserFields {
  const userName = optionalString(resource, 'userName', 'userName', 256);
  if (!userName) throw scimBadRequest('invalidValue', '`userName` is required.', 'userName');
  const name = object(resource, 'name');
  const extension = object(resource, SCHEMA.enterprise);
  const emails = emailsOf(resource);
  const active = member(resource, 'active');
  const email = emails.find((e) => e.primary)?.value ?? emails[0]?.value ?? userName;
  return {
    email,
    userName,
    externalId: optionalString(resource, 'externalId', 'externalId', 256),
    active: active === undefined || active === null ? true : booleanOf(active, 'active'),
    displayName: optionalString(resource, 'displayName'),
    givenName: optionalString(name, 'givenName', 'name.givenName'),
    familyName: optionalString(name, 'familyName', 'name.familyName'),
    middleName: optionalString(name, 'middleName', 'name.middleName'),
    formattedName: optionalString(name, 'formatted', 'name.formatted'),
    title: optionalString(resource, 'title'),
    preferredLanguage: optionalString(resource, 'preferredLanguage', 'preferredLanguage', 64),
    emails,
    employeeNumber: optionalString(extension, 'employeeNumber', 'employeeNumber', 256),
    costCenter: optionalString(extension, 'costCenter', 'costCenter', 256),
    organization: optionalString(extension, 'organization', 'organization', 256),
    division: optionalString(extension, 'division', 'division', 256),
    department: optionalString(extension, 'department', 'department', 256),
    managerId: managerOf(extension),
  };
}

export type GroupFields = { displayName: string; externalId: string | null; memberIds: string[] | null };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A resource id as the path carries it: anything but a uuid names no resource (404, not a database error). */
export function isResourceId(id: string): boolean {
  return UUID.test(id);
}

/** A group's attributes from a full SCIM Group; `memberIds` null when `members` was not sent. */
export function groupFieldsOf(resource: ScimResource): GroupFields {
  const displayName = optionalString(resource, 'displayName', 'displayName', 256);
  if (!displayName) throw scimBadRequest('invalidValue', '`displayName` is required.', 'displayName');
  const members = member(resource, 'members');
  let memberIds: string[] | null = null;
  if (members !== undefined && members !== null) {
    if (!Array.isArray(members) || members.length > 10_000) {
      throw scimBadRequest('invalidValue', '`members` must be a list.', 'members');
    }
    memberIds = members.map((entry, index) => {
      const id = entry && typeof entry === 'object' ? member(entry as ScimResource, 'value') : undefined;
      if (typeof id !== 'string' || !UUID.test(id)) {
        throw scimBadRequest('invalidValue', `\`members[${index}].value\` must be a member id.`, 'members');
      }
      return id.toLowerCase();
    });
  }
  return { displayName, externalId: optionalString(resource, 'externalId', 'externalId', 256), memberIds };
}

const version = (n: number) => `W/"${n}"`;

export function presentUser(row: ScimUserRow, baseUrl: string): ScimResource {
  const name = compact({
    formatted: row.formatted_name,
    familyName: row.family_name,
    givenName: row.given_name,
    middleName: row.middle_name,
  });
  const enterprise = compact({
    employeeNumber: row.employee_number,
    costCenter: row.cost_center,
    organization: row.organization,
    division: row.division,
    department: row.department,
    manager:
      // The manager's id is the identity provider's string, any characters: encoded, the $ref stays a URI.
      row.manager_id === null
        ? null
        : { value: row.manager_id, $ref: `${baseUrl}/v1/scim/Users/${encodeURIComponent(row.manager_id)}` },
  });
  return compact({
    schemas: Object.keys(enterprise).length > 0 ? [SCHEMA.user, SCHEMA.enterprise] : [SCHEMA.user],
    id: row.id,
    externalId: row.external_id,
    userName: row.user_name,
    name: Object.keys(name).length > 0 ? name : null,
    displayName: row.display_name,
    title: row.title,
    preferredLanguage: row.preferred_language,
    active: row.active,
    emails: row.emails.map((e) => compact({ value: e.value, type: e.type ?? null, primary: e.primary ?? false })),
    [SCHEMA.enterprise]: Object.keys(enterprise).length > 0 ? enterprise : null,
    meta: {
      resourceType: 'User',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${baseUrl}/v1/scim/Users/${row.id}`,
      version: version(row.scim_version),
    },
  });
}

export function presentGroup(
  row: ScimGroupRow,
  members: ReadonlyArray<{ user_id: string; display: string }> | null,
  baseUrl: string,
): ScimResource {
  return compact({
    schemas: [SCHEMA.group],
    id: row.id,
    externalId: row.external_id,
    displayName: row.display_name,
    members:
      members === null
        ? null
        : members.map((m) => ({ value: m.user_id, display: m.display, $ref: `${baseUrl}/v1/scim/Users/${m.user_id}` })),
    meta: {
      resourceType: 'Group',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${baseUrl}/v1/scim/Groups/${row.id}`,
      version: version(row.scim_version),
    },
  });
}

/** SCIM leaves unassigned attributes out rather than sending null. */
function compact(values: Record<string, unknown>): ScimResource {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== null && value !== undefined));
}

/** Which attributes an answer carries (RFC 7644 §3.4.2.5): `attributes` or `excludedAttributes`. */
export type Projection = { attributes: string[] | null; excluded: string[] };

export function projectionOf(query: { attributes?: string | undefined; excludedAttributes?: string | undefined }) {
  const split = (list: string | undefined) =>
    (list ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== '');
  const attributes = split(query.attributes);
  return { attributes: attributes.length > 0 ? attributes : null, excluded: split(query.excludedAttributes) };
}

/** Whether a projection leaves `attribute` out entirely (so it need not be loaded). */
export function excludes(projection: Projection, attribute: string): boolean {
  const name = attribute.toLowerCase();
  if (projection.attributes) return !projection.attributes.some((a) => a === name || a.startsWith(`${name}.`));
  return projection.excluded.includes(name);
}

/** `id` and `schemas` are always returned (RFC 7643 §7, `returned: always`). */
const ALWAYS = new Set(['id', 'schemas']);

export function project(resource: ScimResource, projection: Projection, schemaUrns: readonly string[]): ScimResource {
  if (!projection.attributes && projection.excluded.length === 0) return resource;
  const names = (list: string[]) => list.map((name) => stripUrn(name, schemaUrns));
  const wanted = projection.attributes ? names(projection.attributes) : null;
  const excluded = names(projection.excluded);
  const out: ScimResource = {};
  for (const [key, value] of Object.entries(resource)) {
    const lower = key.toLowerCase();
    if (ALWAYS.has(lower)) {
      out[key] = value;
      continue;
    }
    const isExtension = lower.startsWith('urn:');
    if (isExtension && excluded.includes(lower)) continue;
    if (isExtension && value && typeof value === 'object') {
      const inner = projectObject(value as ScimResource, wanted, excluded, (k) => k.toLowerCase(), lower);
      if (inner) out[key] = inner;
      continue;
    }
    const kept = projectObject({ [key]: value }, wanted, excluded, (k) => k.toLowerCase(), null);
    if (kept) Object.assign(out, kept);
  }
  return out;
}

/** `name.givenName` and `urn:…:User:department` → the names projectObject compares. */
function stripUrn(name: string, schemaUrns: readonly string[]): string {
  for (const urn of schemaUrns) {
    const prefix = `${urn.toLowerCase()}:`;
    if (name.startsWith(prefix) && urn !== SCHEMA.enterprise) return name.slice(prefix.length);
  }
  return name;
}

function projectObject(
  value: ScimResource,
  wanted: string[] | null,
  excluded: string[],
  lowerOf: (key: string) => string,
  prefix: string | null,
): ScimResource | null {
  const out: ScimResource = {};
  for (const [key, member] of Object.entries(value)) {
    const name = prefix ? `${prefix}:${lowerOf(key)}` : lowerOf(key);
    const whole = wanted
      ? wanted.includes(name) || (prefix !== null && wanted.includes(prefix))
      : !excluded.includes(name);
    if (whole) {
      out[key] = member;
      continue;
    }
    // A sub-attribute asked for alone (`name.givenName`).
    if (wanted && member && typeof member === 'object' && !Array.isArray(member)) {
      const subs = wanted.filter((w) => w.startsWith(`${name}.`)).map((w) => w.slice(name.length + 1));
      if (subs.length > 0) {
        out[key] = Object.fromEntries(Object.entries(member).filter(([k]) => subs.includes(k.toLowerCase())));
      }
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}
