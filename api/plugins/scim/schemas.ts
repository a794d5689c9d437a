import type { ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import type { ScimResource } from '../../../lib/scim/resources.ts';
import type { PatchBody, ScimListQuery, ScimProjectionQuery } from '../../../lib/scim/users.ts';
import { SCIM_OPERATIONS, SCIM_RESOURCE_TYPES } from '../../../lib/scim/vocabulary.ts';
import { id, listEnvelope, timestamp } from '../../schemas.ts';

// The API-key routes' schemas (tokens, SCIM audit), and the SCIM protocol routes' inputs.
// SCIM bodies are read by lib/scim/resources.ts, which tolerates what identity providers send:
// joi only checks their outline here.

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

// SCIM protocol routes: not in the OpenAPI document (RFC 7644 is their contract, served by the
// discovery endpoints), authenticated by SCIM tokens only.

export const scimAuth = { strategy: 'scim-token' };
/** SCIM clients send application/scim+json; some send application/json. */
export const scimPayload = { allow: ['application/scim+json', 'application/json'] };

export const scimIdParams = Joi.object<{ id: string }>({ id: Joi.string().max(200).required() });

const attributeList = Joi.string().max(2000).allow('');

export const scimProjectionQuery = Joi.object<ScimProjectionQuery>({
  attributes: attributeList,
  excludedAttributes: attributeList,
});

export const scimListQuery = Joi.object<ScimListQuery>({
  filter: Joi.string().max(2000).allow(''),
  startIndex: Joi.number().integer().unsafe(),
  count: Joi.number().integer().unsafe(),
  attributes: attributeList,
  excludedAttributes: attributeList,
}).unknown(true);

export const scimResourceBody = Joi.object<ScimResource>({
  schemas: Joi.array().items(Joi.string().max(200)).max(10),
}).unknown(true);

export const scimPatchBody = Joi.object<PatchBody>({
  schemas: Joi.array().items(Joi.string().max(200)).max(10).required(),
  Operations: Joi.array()
    .items(
      Joi.object({ op: Joi.string().max(20).required(), path: Joi.string().max(1000), value: Joi.any() }).unknown(true),
    )
    .min(1)
    .max(1000)
    .required(),
}).unknown(true);

/** A SCIM answer: its shape is RFC 7643's, checked by the tests rather than here. */
export const scimAnswer = Joi.object({ schemas: Joi.array().items(Joi.string()).required() }).unknown(true);

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
