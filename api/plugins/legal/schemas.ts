import Joi from 'joi';
import { LEGAL_LANGUAGES } from '../../../lib/legal/vocabulary.ts';
import { listEnvelope, timestamp } from '../../schemas.ts';

export const slug = Joi.string()
  .max(100)
  .pattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'slug');
export const version = Joi.string().trim().min(1).max(50);

const summaryKeys = {
  object: Joi.string().valid('legal_document').required(),
  slug: Joi.string().required(),
  title: Joi.string().required(),
  version: Joi.string().required().description('The current version: the newest in effect.'),
  effective_date: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .required()
    .description('The day the version took effect (YYYY-MM-DD).'),
  language: Joi.string()
    .valid(...LEGAL_LANGUAGES)
    .required(),
  url: Joi.string().required().description('`GET /v1/legal/documents/{slug}`: the version with its body.'),
};

export const legalDocumentSummary = Joi.object(summaryKeys).label('LegalDocumentSummary');

export const legalDocument = Joi.object({
  ...summaryKeys,
  body: Joi.string().required().description('The text, plain with numbered paragraphs.'),
  published_at: timestamp.required(),
}).label('LegalDocument');

export const legalDocumentList = listEnvelope(legalDocumentSummary, 'LegalDocumentList');

export const legalAcceptance = Joi.object({
  object: Joi.string().valid('legal_acceptance').required(),
  slug: Joi.string().required(),
  version: Joi.string().required(),
  user_id: Joi.string().required().description("The key's user, who accepted."),
  accepted_at: timestamp.required(),
}).label('LegalAcceptance');
