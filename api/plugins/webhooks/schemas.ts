import Joi from 'joi';
import { id, listEnvelope, text, timestamp } from '../../schemas.ts';

export const webhookUrl = Joi.string()
  .uri({ scheme: ['https', 'http'] })
  .max(2048);
export const events = Joi.array().items(Joi.string().max(100)).min(1).max(100);
export const name = text.trim().max(100).allow('');
export const description = text.trim().max(500).allow('', null);

export const webhook = Joi.object({
  id: id.required(),
  object: Joi.string().valid('webhook').required(),
  name: Joi.string().allow('').required(),
  description: Joi.string().allow(null, '').required(),
  url: Joi.string().required(),
  events: Joi.array().items(Joi.string()).required(),
  is_active: Joi.boolean().required(),
  success_count: Joi.number().integer().required(),
  failure_count: Joi.number().integer().required(),
  last_triggered_at: timestamp.allow(null).required(),
  last_status: Joi.number().integer().allow(null).required(),
  disabled_reason: Joi.string().allow(null).required(),
  created_at: timestamp.required(),
}).label('Webhook');

export const webhookWithSecret = webhook
  .keys({
    secret: Joi.string()
      .pattern(/^whsec_/)
      .required()
      .description('The signing secret. Shown once only.'),
  })
  .label('WebhookWithSecret');

export const webhookList = listEnvelope(webhook, 'WebhookList');
