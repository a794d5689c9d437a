import type { ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import { DISCOVERY_SCHEMA } from '../../../lib/scim/discovery.ts';
import { SCHEMA, type ScimResource } from '../../../lib/scim/resources.ts';
import {
  type PatchBody,
  SCIM_MAX_RESULTS,
  type ScimListQuery,
  type ScimProjectionQuery,
} from '../../../lib/scim/users.ts';
import { SCIM_OPERATIONS, SCIM_RESOURCE_TYPES } from '../../../lib/scim/vocabulary.ts';
import { id, listEnvelope, timestamp } from '../../schemas.ts';
import type { RouteSettings } from '../../types.ts';

// The API-key routes' schemas (tokens, SCIM audit), and the SCIM protocol routes' settings and schemas.

export const scimToken = Joi.object({
  id: id.required(),
  object: Joi.string().valid('scim_token').required(),
  name: Joi.string().allow('').required(),
  token_prefix: Joi.string().required().description('`scim_` and six characters, as lists show it.'),
  environment: Joi.string().valid('live').required(),
  created_at: timestamp.required(),
  last_used_at: timestamp.allow(null).required().description('Within a minute.'),
  revoked_at: timestamp.allow(null).required(),
}).label('ScimToken');

export const scimTokenWithValue = scimToken
  .keys({
    token: Joi.string()
      .pattern(/^scim_[0-9A-Za-z]{48}$/)
      .required()
      .description('The bearer token for the identity provider. Shown once only.'),
  })
  .label('ScimTokenWithValue');

export const revokedScimToken = scimToken
  .keys({ revoked: Joi.boolean().valid(true).required() })
  .label('RevokedScimToken');

export const scimTokenList = listEnvelope(scimToken, 'ScimTokenList');

export const scimAuditEvent = Joi.object({
  id: id.required(),
  object: Joi.string().valid('scim_audit_event').required(),
  scim_token_id: id.allow(null).required().description('Null once the token is gone.'),
  operation: Joi.string()
    .valid(...SCIM_OPERATIONS)
    .required(),
  resource_type: Joi.string()
    .valid(...SCIM_RESOURCE_TYPES)
    .required(),
  resource_id: Joi.string().allow(null).required(),
  response_status: Joi.number().integer().required().description('The HTTP status of the SCIM operation.'),
  error_message: Joi.string().allow(null).required().description('Null on success.'),
  created_at: timestamp.required(),
}).label('ScimAuditEvent');

export const scimAuditList = listEnvelope(scimAuditEvent, 'ScimAuditList')
  .keys({
    filter: Joi.object({
      limit: Joi.number().integer().required(),
      operation: Joi.string()
        .valid(...SCIM_OPERATIONS)
        .allow(null)
        .required(),
    }).required(),
  })
  .label('ScimAuditList');

// The SCIM protocol routes (RFC 7643, RFC 7644): opened by SCIM tokens only, their bodies and errors
// `application/scim+json`. Requests are read by lib/scim/resources.ts, which tolerates what identity
// providers send (attribute names in any case, Entra ID's "True" and "False"): the request schemas
// outline the attributes read and let the rest through. The answers' schemas are exactly what
// lib/scim presents.

export const scimAuth = { strategy: 'scim-token' };
/** SCIM clients send application/scim+json; some send application/json. */
export const scimPayload = { allow: ['application/scim+json', 'application/json'] };

/**
 * What every SCIM protocol route declares: its media type and error body for the OpenAPI document,
 * and that the SDK has no method for it. `notModified`: a single resource, whose ETag a GET may send
 * back in `If-None-Match` (304); `uniqueness`: a write that can find its `userName` or e-mail address
 * taken (409 `uniqueness`).
 */
export function scimProtocol(
  scim?: RouteSettings['scim'],
  { notModified = false, uniqueness = false }: { notModified?: boolean; uniqueness?: boolean } = {},
): RouteSettings {
  return {
    ...(scim ? { scim } : {}),
    openapi: {
      mediaType: 'application/scim+json',
      errorBody: 'scim',
      ...(uniqueness ? { errors: [409] } : {}),
      ...(notModified
        ? { statuses: { 304: 'Not modified: `If-None-Match` holds the current `meta.version` (the `ETag`).' } }
        : {}),
    },
    sdk: { excluded: 'the SCIM protocol (RFC 7644): its clients are identity providers, not the SDK' },
  };
}

export const scimIdParams = Joi.object<{ id: string }>({ id: Joi.string().max(200).required() });

const attributeList = Joi.string()
  .max(2000)
  .allow('')
  .description('Attribute names, comma-separated; `id` and `schemas` are always returned.');

export const scimProjectionQuery = Joi.object<ScimProjectionQuery>({
  attributes: attributeList,
  excludedAttributes: attributeList,
});

export const scimListQuery = Joi.object<ScimListQuery>({
  filter: Joi.string().max(2000).allow('').description('An RFC 7644 filter (docs/scim.md, "Lists and filters").'),
  startIndex: Joi.number().integer().unsafe().description('1-based; below 1 counts as 1.'),
  count: Joi.number()
    .integer()
    .unsafe()
    .description(`Resources per page: default 100, clamped into 0..${SCIM_MAX_RESULTS}.`),
  attributes: attributeList,
  excludedAttributes: attributeList,
}).unknown(true);

// Requests.

/** A string attribute as identity providers send it: null or empty is unassigned. */
const sentString = Joi.string().allow('', null);
/** Entra ID sends booleans as the strings "True" and "False". */
const sentBoolean = Joi.alternatives(
  Joi.boolean().strict(),
  // Spelt out rather than with the `i` flag, which the OpenAPI document's patterns cannot carry.
  Joi.string().pattern(/^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$/),
  Joi.valid(null),
);
const schemaList = Joi.array().items(Joi.string().max(200)).max(10);

export const scimUserBody = Joi.object<ScimResource>({
  schemas: schemaList,
  userName: sentString.description('Required; unique in the workspace, without regard to case.'),
  externalId: sentString,
  name: Joi.object({
    formatted: sentString,
    familyName: sentString,
    givenName: sentString,
    middleName: sentString,
  })
    .unknown(true)
    .allow(null),
  displayName: sentString,
  title: sentString,
  preferredLanguage: sentString,
  active: sentBoolean.description('false deactivates the member; true when left out.'),
  emails: Joi.array()
    .items(Joi.object({ value: sentString, type: sentString, primary: sentBoolean }).unknown(true))
    .allow(null)
    .description('At most 20; the primary one (else the first, else `userName`) is the member address.'),
  [SCHEMA.enterprise]: Joi.object({
    employeeNumber: sentString,
    costCenter: sentString,
    organization: sentString,
    division: sentString,
    department: sentString,
    manager: Joi.alternatives(
      Joi.object({ value: sentString }).unknown(true),
      Joi.string(),
      Joi.valid(null),
    ).description('`{"value": id}`, or the bare id as Entra ID sends it.'),
  })
    .unknown(true)
    .allow(null),
})
  .unknown(true)
  .label('ScimUserInput')
  .description('Attribute names are case-insensitive; others (`password`, `roles`, `groups`…) are ignored.');

export const scimGroupBody = Joi.object<ScimResource>({
  schemas: schemaList,
  displayName: sentString.description('Required.'),
  externalId: sentString,
  members: Joi.array()
    .items(Joi.object({ value: sentString.description('A member id of the workspace.') }).unknown(true))
    .allow(null),
})
  .unknown(true)
  .label('ScimGroupInput');

export const scimPatchBody = Joi.object<PatchBody>({
  schemas: schemaList.required().description(`Must hold \`${SCHEMA.patch}\`.`),
  Operations: Joi.array()
    .items(
      Joi.object({
        op: Joi.string().max(20).required().description('`add`, `remove` or `replace`, in any case.'),
        path: Joi.string().max(1000).description('An attribute path; `remove` needs one.'),
        value: Joi.any(),
      }).unknown(true),
    )
    .min(1)
    .max(1000)
    .required(),
})
  .unknown(true)
  .label('ScimPatchOp');

// Answers.

const uri = Joi.string().uri();
const dateTime = Joi.string().isoDate();
const schemasOf = (...urns: string[]) =>
  Joi.array()
    .items(Joi.string().valid(...urns))
    .min(1)
    .required();

/** Every member may be left out by `attributes` or `excludedAttributes`, but `id` and `schemas`. */
const resourceMeta = (resourceType: string) =>
  Joi.object({
    resourceType: Joi.string().valid(resourceType),
    created: dateTime,
    lastModified: dateTime,
    location: uri,
    version: Joi.string()
      .pattern(/^W\/"[0-9]+"$/)
      .description('A weak ETag, one more on every change; also the `ETag` header of a single resource.'),
  });

export const scimUser = Joi.object({
  schemas: schemasOf(SCHEMA.user, SCHEMA.enterprise),
  id: id.required(),
  externalId: Joi.string(),
  userName: Joi.string(),
  name: Joi.object({
    formatted: Joi.string(),
    familyName: Joi.string(),
    givenName: Joi.string(),
    middleName: Joi.string(),
  }),
  displayName: Joi.string(),
  title: Joi.string(),
  preferredLanguage: Joi.string(),
  active: Joi.boolean(),
  emails: Joi.array().items(
    Joi.object({ value: Joi.string().required(), type: Joi.string(), primary: Joi.boolean().required() }),
  ),
  [SCHEMA.enterprise]: Joi.object({
    employeeNumber: Joi.string(),
    costCenter: Joi.string(),
    organization: Joi.string(),
    division: Joi.string(),
    department: Joi.string(),
    manager: Joi.object({ value: Joi.string(), $ref: uri }),
  }),
  meta: resourceMeta('User'),
})
  .label('ScimUser')
  .description('Unassigned attributes are left out.');

export const scimGroup = Joi.object({
  schemas: schemasOf(SCHEMA.group),
  id: id.required(),
  externalId: Joi.string(),
  displayName: Joi.string(),
  members: Joi.array().items(
    Joi.object({
      value: id.required(),
      display: Joi.string().required().description('The display name of the member, else their userName.'),
      $ref: uri.required(),
    }),
  ),
  meta: resourceMeta('Group'),
}).label('ScimGroup');

const listResponseOf = (resource: Joi.ObjectSchema, label: string) =>
  Joi.object({
    schemas: schemasOf(SCHEMA.list),
    totalResults: Joi.number().integer().min(0).required(),
    // Echoes the request's, however large.
    startIndex: Joi.number().integer().unsafe().min(1).required(),
    itemsPerPage: Joi.number().integer().min(0).required(),
    Resources: Joi.array().items(resource).required(),
  }).label(label);

export const scimUserList = listResponseOf(scimUser, 'ScimUserList');
export const scimGroupList = listResponseOf(scimGroup, 'ScimGroupList');

const supported = Joi.object({ supported: Joi.boolean().required() });

export const scimServiceProviderConfig = Joi.object({
  schemas: schemasOf(DISCOVERY_SCHEMA.serviceProviderConfig),
  documentationUri: uri.required(),
  patch: supported.required(),
  bulk: supported
    .keys({ maxOperations: Joi.number().integer().required(), maxPayloadSize: Joi.number().integer().required() })
    .required(),
  filter: supported.keys({ maxResults: Joi.number().integer().required() }).required(),
  changePassword: supported.required(),
  sort: supported.required(),
  etag: supported.required(),
  authenticationSchemes: Joi.array()
    .items(
      Joi.object({
        type: Joi.string().required(),
        name: Joi.string().required(),
        description: Joi.string().required(),
        specUri: uri,
        documentationUri: uri,
        primary: Joi.boolean(),
      }),
    )
    .required(),
  meta: Joi.object({
    resourceType: Joi.string().valid('ServiceProviderConfig').required(),
    location: uri.required(),
  }).required(),
}).label('ScimServiceProviderConfig');

const discoveryMeta = (resourceType: string) =>
  Joi.object({ resourceType: Joi.string().valid(resourceType).required(), location: uri.required() }).required();

export const scimResourceType = Joi.object({
  schemas: schemasOf(DISCOVERY_SCHEMA.resourceType),
  id: Joi.string().required(),
  name: Joi.string().required(),
  endpoint: Joi.string().required().description('Relative to /v1/scim.'),
  description: Joi.string(),
  schema: Joi.string().required().description('The URN of its core schema.'),
  schemaExtensions: Joi.array().items(
    Joi.object({ schema: Joi.string().required(), required: Joi.boolean().required() }),
  ),
  meta: discoveryMeta('ResourceType'),
}).label('ScimResourceType');

const attributeCharacteristics = {
  name: Joi.string().required(),
  type: Joi.string()
    .valid('string', 'boolean', 'decimal', 'integer', 'dateTime', 'reference', 'complex', 'binary')
    .required(),
  multiValued: Joi.boolean().required(),
  required: Joi.boolean().required(),
  caseExact: Joi.boolean().required(),
  mutability: Joi.string().valid('readOnly', 'readWrite', 'immutable', 'writeOnly').required(),
  returned: Joi.string().valid('always', 'never', 'default', 'request').required(),
  uniqueness: Joi.string().valid('none', 'server', 'global').required(),
  description: Joi.string().required(),
};

const scimSubAttribute = Joi.object(attributeCharacteristics).label('ScimSubAttribute');

export const scimSchema = Joi.object({
  schemas: schemasOf(DISCOVERY_SCHEMA.schema),
  id: Joi.string().required().description('The URN of the schema.'),
  name: Joi.string().required(),
  description: Joi.string().required(),
  attributes: Joi.array()
    .items(Joi.object({ ...attributeCharacteristics, subAttributes: Joi.array().items(scimSubAttribute) }))
    .required(),
  meta: discoveryMeta('Schema'),
}).label('ScimSchema');

export const scimResourceTypeList = listResponseOf(scimResourceType, 'ScimResourceTypeList');
export const scimSchemaList = listResponseOf(scimSchema, 'ScimSchemaList');

/**
 * A SCIM resource answered with its version as a weak ETag (RFC 7644 §3.14), the `meta.version`
 * it carries: hapi then answers a GET whose If-None-Match holds it with 304.
 */
export function withVersion(h: ResponseToolkit, resource: ScimResource, status = 200) {
  const response = h.response(resource).code(status);
  const version = (resource.meta as { version?: unknown } | undefined)?.version;
  const tag = typeof version === 'string' ? /^W\/"(.*)"$/.exec(version)?.[1] : undefined;
  return tag === undefined ? response : response.etag(tag, { weak: true, vary: false });
}
