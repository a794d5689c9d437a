import Joi from 'joi';
import { isIpOrCidr } from '../../../lib/net/ip-allow-list.ts';
import { ENVIRONMENTS, KEY_TYPES } from '../../../lib/vocabulary.ts';
import { id, listEnvelope, scope, text, timestamp } from '../../schemas.ts';

const ipEntry = Joi.string()
  .max(64)
  .custom((value: string, helpers) => {
    return isIpOrCidr(value) ? value : helpers.error('string.ipOrCidr');
  })
  .messages({ 'string.ipOrCidr': '{{#label}} must be an IP address or CIDR range' });

export const name = text.trim().min(1).max(100);
export const description = text.trim().allow('').max(500);
export const scopes = Joi.array().items(scope).min(1).max(64).unique();
export const allowedIps = Joi.array().items(ipEntry).max(100).unique();
export const maxUses = Joi.number().integer().min(1).max(2_147_483_647);
export const mfaCode = text.trim().max(16);

export const apiKey = Joi.object({
  id: id.required(),
  object: Joi.string().valid('api_key').required(),
  name: Joi.string().required(),
  description: Joi.string().allow('').required(),
  key_prefix: Joi.string().required(),
  key_type: Joi.string()
    .valid(...KEY_TYPES)
    .required(),
  scopes: Joi.array().items(Joi.string()).required(),
  environment: Joi.string()
    .valid(...ENVIRONMENTS)
    .required(),
  is_active: Joi.boolean().required(),
  allowed_ips: Joi.array().items(Joi.string()).required(),
  max_uses: Joi.number().integer().allow(null).required(),
  used_count: Joi.number().integer().required(),
  last_used_at: timestamp.allow(null).required(),
  expires_at: timestamp.allow(null).required(),
  created_at: timestamp.required(),
  revoked_at: timestamp.allow(null).required(),
  revocation_reason: Joi.string().allow(null).required(),
}).label('ApiKey');

export const apiKeyWithValue = apiKey
  .keys({
    key: Joi.string().required().description('The full key value. Shown once only.'),
    warning: Joi.string().required(),
  })
  .label('ApiKeyWithValue');

export const rotatedApiKey = apiKeyWithValue
  .keys({ previous_key_valid_until: timestamp.required() })
  .label('RotatedApiKey');

export const revokedApiKey = apiKey.keys({ revoked: Joi.boolean().valid(true).required() }).label('RevokedApiKey');

export const apiKeyList = listEnvelope(apiKey, 'ApiKeyList');
