import Joi from 'joi';
import { SCOPES } from '../lib/api-keys/scopes.ts';

// Schemas shared by several routes. Route-specific ones live beside their route.

/**
 * Free text from clients. PostgreSQL cannot store NUL in text, so it is
 * refused here, at the edge, rather than failing deep in a query.
 */
export const text = Joi.string()
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point.
  .pattern(/\u0000/, { invert: true, name: 'no NUL characters' })
  .messages({ 'string.pattern.invert.name': '{{#label}} must not contain NUL characters' });

/**
 * A file's declared MIME type (`type/subtype`, no parameters), for every family that takes files:
 * it becomes the Content-Type of the file's downloads, so nothing else is stored.
 */
export const mimeType = text.max(255).pattern(/^[\w.+-]+\/[\w.+-]+$/, 'MIME type');

export const id = Joi.string().guid({ version: ['uuidv4', 'uuidv7', 'uuidv8'], separator: '-' });
export const idParams = Joi.object<{ id: string }>({ id: id.required() });
// Bounded to what PostgreSQL's timestamptz can hold (and what makes sense).
export const timestamp = Joi.date().iso().min('1970-01-01T00:00:00Z').max('9999-12-31T23:59:59Z');
export const scope = Joi.string().valid(...SCOPES);

/** Pagination query: out-of-range limits are clamped, not rejected (spec: list endpoints). */
export function pageQuery(maxLimit = 100, defaultLimit = 20) {
  return {
    limit: Joi.number()
      .integer()
      .unsafe()
      .default(defaultLimit)
      .custom((value: number) => Math.min(maxLimit, Math.max(1, value))),
    cursor: text.max(1024),
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
