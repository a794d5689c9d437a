import Joi from 'joi';
import { RECIPIENT_SOURCES } from '../../../lib/recipients/vocabulary.ts';
import { id, listEnvelope, text, timestamp } from '../../schemas.ts';

// Addresses as mail servers take them (RFC 5321: 254 characters in all); see lib/recipients/email.ts.
export const emailAddress = Joi.string().trim().email({ tlds: false }).max(254);
export const MAX_TAGS = 20;
export const tag = text
  .trim()
  .min(1)
  .max(40)
  .pattern(/^[\p{L}\p{N}][\p{L}\p{N} _.:/-]*$/u, { name: 'tag' })
  .messages({
    'string.pattern.name': '{{#label}} holds letters, digits, spaces and _ . : / - and starts with a letter or digit',
  });
export const tags = Joi.array().items(tag).max(MAX_TAGS);
export const personName = text.trim().max(200).allow('', null);
export const organisation = text.trim().max(200).allow('', null);

export const recipient = Joi.object({
  id: id.required(),
  object: Joi.string().valid('recipient').required(),
  email: Joi.string().required(),
  name: Joi.string().allow(null).required(),
  organisation: Joi.string().allow(null).required(),
  tags: Joi.array().items(Joi.string()).required(),
  source: Joi.string()
    .valid(...RECIPIENT_SOURCES)
    .required()
    .description('`api`: created with POST /v1/recipients; `transfer`: from an address a transfer was sent to.'),
  stats: Joi.object({
    transfers_sent: Joi.number().integer().min(0).required().description('Transfers sent to this address.'),
    downloads_completed: Joi.number()
      .integer()
      .min(0)
      .required()
      .description('Downloads completed through its personal links (docs/recipients.md).'),
    last_sent_at: timestamp.allow(null).required(),
    last_downloaded_at: timestamp.allow(null).required(),
  })
    .required()
    .label('RecipientStats'),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
}).label('Recipient');

export const recipientList = listEnvelope(recipient, 'RecipientList');

export const deletedRecipient = Joi.object({
  id: id.required(),
  object: Joi.string().valid('recipient').required(),
  deleted: Joi.boolean().valid(true).required(),
}).label('DeletedRecipient');

/** A transfer's recipient, as its owner sees it. */
export const transferRecipient = Joi.object({
  object: Joi.string().valid('transfer_recipient').required(),
  recipient_id: id
    .allow(null)
    .required()
    .description('The address-book entry; null once it was deleted (the link keeps working).'),
  email: Joi.string().required().description('The address the personal link was sent to.'),
  share_url: Joi.string()
    .uri()
    .required()
    .description(
      "The recipient's personal link: downloads through it are theirs. A capability: share it with them only.",
    ),
  mailed_at: timestamp.allow(null).required().description('When the link was mailed; null until then.'),
  downloads_completed: Joi.number().integer().min(0).required(),
  last_downloaded_at: timestamp.allow(null).required(),
  files_downloaded: Joi.array()
    .items(id)
    .required()
    .description('Files delivered whole through this link at least once.'),
}).label('TransferRecipient');

export const transferRecipientList = listEnvelope(transferRecipient, 'TransferRecipientList');
