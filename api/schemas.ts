import Joi from 'joi';
import { SCOPES } from '../lib/api-keys/scopes.ts';
import { SCHEMA as SCIM_SCHEMA } from '../lib/scim/resources.ts';

// Schemas shared by several routes. Route-specific ones live beside their route.

/**
 * JSON can carry half of a surrogate pair alone (`"\ud800"`), which is no character and has no UTF-8
 * form: PostgreSQL would be sent U+FFFD in its place, and a name would be stored other than it was
 * sent. Refused, as the other characters no name may hold (docs/conventions.md, "Names and titles").
 */
function wellFormed(value: string, helpers: Joi.CustomHelpers) {
  return value.isWellFormed() ? value : helpers.error('string.wellFormed');
}
const WELL_FORMED_MESSAGE = { 'string.wellFormed': '{{#label}} must be valid Unicode (no unpaired surrogate)' };

/**
 * Free text from clients. PostgreSQL cannot store NUL in text, so it is
 * refused here, at the edge, rather than failing deep in a query.
 */
export const text = Joi.string()
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point.
  .pattern(/\u0000/, { invert: true, name: 'no NUL characters' })
  .custom(wellFormed)
  .messages({ 'string.pattern.invert.name': '{{#label}} must not contain NUL characters', ...WELL_FORMED_MESSAGE });

/**
 * What no name or title may hold (docs/conventions.md, "Names and titles"): C0 and C1 controls and DEL
 * (a carriage return rewrites a terminal line, a newline splits a log or a header), the line and paragraph
 * separators, and the invisible direction marks, embeddings, overrides and isolates that make `invoice\u202Efdp.exe`
 * read as `invoiceexe.pdf`. The same set the SDK replaces when it writes a file (`safeFileName`). Written with
 * escapes and no flag, so that every regex dialect reading the OpenAPI document reads it alike.
 */
const UNSAFE_IN_NAMES = '\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069';

/**
 * A title or a name people read (a transfer's title, a vault's, a collection's, an intake's, a folder's):
 * NFC-normalised, so that the same words typed on any system are the same string, trimmed, and refused with
 * `validation_error` when it holds one of the characters above. Routes add their own lengths.
 */
export const titleText = Joi.string()
  .normalize('NFC')
  .trim()
  .pattern(new RegExp(`^[^${UNSAFE_IN_NAMES}]*$`), { name: 'title' })
  .custom(wellFormed)
  .messages({
    'string.pattern.name': '{{#label}} must not contain control characters or bidirectional formatting characters',
    ...WELL_FORMED_MESSAGE,
  });

/**
 * A file's name, wherever a client declares one (a transfer's files, an intake submission's, a vault item):
 * a title that is also one path segment: not `.` or `..`, no `/` or backslash, and at most 255
 * characters, what file systems take.
 */
export const fileName = titleText
  .min(1)
  .max(255)
  .invalid('.', '..')
  .pattern(new RegExp(`^[^/\\\\${UNSAFE_IN_NAMES}]*$`), { name: 'file name' })
  .messages({
    'any.invalid': '{{#label}} must be a file name, not . or ..',
    'string.pattern.name':
      '{{#label}} must be a file name: no / or \\, control characters or bidirectional formatting characters',
  });

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

/** The SCIM protocol routes' error body (RFC 7644 §3.12), as api/errors.ts `renderScimError` writes it. */
export const scimErrorBody = Joi.object({
  schemas: Joi.array().items(Joi.string().valid(SCIM_SCHEMA.error)).length(1).required(),
  status: Joi.string()
    .pattern(/^[45][0-9]{2}$/)
    .required()
    .description('The HTTP status, as a string.'),
  scimType: Joi.string()
    .valid('invalidFilter', 'invalidValue', 'invalidSyntax', 'noTarget', 'mutability', 'uniqueness')
    .description('What was wrong, where RFC 7644 has a word for it; always set on a 400.'),
  detail: Joi.string().required(),
}).label('ScimError');
