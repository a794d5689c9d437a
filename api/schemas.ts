import Joi from 'joi';
import { SCOPES } from '../lib/api-keys/scopes.ts';

// Schemas shared by several routes. Route-specific ones live beside their route.

export const id = Joi.string().guid({ version: ['uuidv4', 'uuidv7', 'uuidv8'], separator: '-' });
export const idParams = Joi.object({ id: id.required() });
export const timestamp = Joi.date().iso();
export const scope = Joi.string().valid(...SCOPES);

/** Pagination query: out-of-range limits are clamped, not rejected (spec: list endpoints). */
export function pageQuery(maxLimit = 100, defaultLimit = 20) {
  return {
    limit: Joi.number()
      .integer()
      .unsafe()
      .default(defaultLimit)
      .custom((value: number) => Math.min(maxLimit, Math.max(1, value))),
    cursor: Joi.string().max(1024),
    offset: Joi.number().integer().min(0).max(1_000_000),
  };
}

export function listEnvelope(item: Joi.Schema, label: string) {
  return Joi.object({
    object: Joi.string().valid('list').required(),
    data: Joi.array().items(item).required(),
    has_more: Joi.boolean().required(),
    next_cursor: Joi.string().allow(null).required(),
    limit: Joi.number().integer().required(),
    offset: Joi.number().integer().allow(null).required(),
  }).label(label);
}

export const errorEnvelope = Joi.object({
  error: Joi.object({
    code: Joi.string().required(),
    message: Joi.string().required(),
    param: Joi.string().allow(null),
    doc_url: Joi.string().allow(null),
    request_id: Joi.string().allow(null),
  }).unknown(true),
}).label('Error');
