import Joi from 'joi';
import { DELIVERY_TRIGGERS } from '../../../lib/vocabulary.ts';
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

export const deliveryAttempt = Joi.object({
  id: id.required(),
  object: Joi.string().valid('webhook_delivery_attempt').required(),
  delivery_id: id.required().description('The delivery (this event to this webhook) the attempt belongs to.'),
  webhook_id: id.required(),
  event_id: Joi.string().required(),
  event_type: Joi.string().required(),
  attempt: Joi.number().integer().min(1).required().description('1 for the first attempt of the delivery.'),
  trigger: Joi.string()
    .valid(...DELIVERY_TRIGGERS)
    .required(),
  url: Joi.string().required().description('Where it was sent.'),
  succeeded: Joi.boolean().required(),
  status_code: Joi.number().integer().allow(null).required().description('Null when no HTTP answer came.'),
  duration_ms: Joi.number().integer().min(0).required(),
  error: Joi.string().allow(null).required(),
  response_body: Joi.string().allow(null, '').required().description('The first KiB of the answer.'),
  next_retry_at: timestamp.allow(null).required().description('When the schedule tries again after this failure.'),
  created_at: timestamp.required(),
}).label('WebhookDeliveryAttempt');

export const deliveryAttemptList = listEnvelope(deliveryAttempt, 'WebhookDeliveryAttemptList');
