import Joi from 'joi';
import { GDPR_EXPORT_STATUSES } from '../../../lib/gdpr/vocabulary.ts';
import { ENVIRONMENTS } from '../../../lib/vocabulary.ts';
import { id, timestamp } from '../../schemas.ts';

export const legalAcceptanceEntry = Joi.object({
  slug: Joi.string().required(),
  title: Joi.string().required(),
  current_version: Joi.string().required(),
  effective_date: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .required(),
  accepted_version: Joi.string().allow(null).required(),
  accepted_at: timestamp.allow(null).required(),
  up_to_date: Joi.boolean().required(),
}).label('LegalAcceptanceEntry');

export const legalAcceptanceList = Joi.object({
  object: Joi.string().valid('list').required(),
  data: Joi.array().items(legalAcceptanceEntry).required(),
  has_more: Joi.boolean().required(),
  next_cursor: Joi.string().allow(null).required(),
  limit: Joi.number().integer().required(),
  offset: Joi.number().integer().allow(null).required(),
  summary: Joi.object({
    total_documents: Joi.number().integer().min(0).required(),
    accepted_up_to_date: Joi.number().integer().min(0).required(),
    acceptance_outdated: Joi.number().integer().min(0).required(),
    never_accepted: Joi.number().integer().min(0).required(),
  }).required(),
}).label('LegalAcceptanceList');

export const gdprExport = Joi.object({
  object: Joi.string().valid('gdpr_export').required(),
  id: id.required(),
  status: Joi.string()
    .valid(...GDPR_EXPORT_STATUSES)
    .required(),
  user_id: id.allow(null).required().description('The user it is about; null for the whole workspace.'),
  requested_by: id.required().description('The user whose key asked for it.'),
  environment: Joi.string()
    .valid(...ENVIRONMENTS)
    .required(),
  current_family: Joi.string().allow(null).required().description('The family being collected while `running`.'),
  families_done: Joi.number().integer().min(0).required(),
  families_total: Joi.number().integer().min(0).required(),
  size: Joi.number().integer().min(0).allow(null).required().description('Bytes of JSON, once `completed`.'),
  error: Joi.string().allow(null).required().description('Why it `failed`.'),
  created_at: timestamp.required(),
  completed_at: timestamp.allow(null).required(),
  expires_at: timestamp.allow(null).required().description('When it is (or was) deleted: 7 days after completion.'),
  download_url: Joi.string()
    .allow(null)
    .required()
    .description('While `completed`: a fresh link to the JSON, valid 300 seconds.'),
  download_expires_at: timestamp.allow(null).required(),
}).label('GdprExport');
