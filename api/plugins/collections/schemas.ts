import Joi from 'joi';
import { MAX_TRANSFERS_PER_CALL } from '../../../lib/collections/service.ts';
import { COLLECTION_ACCESS } from '../../../lib/collections/vocabulary.ts';
import { ENCRYPTION_MODES } from '../../../lib/vocabulary.ts';
import { id, listEnvelope, text, timestamp, titleText } from '../../schemas.ts';
import { sharedFile } from '../shares/schemas.ts';
import { transferStatus } from '../transfers/schemas.ts';

export const title = titleText.min(1).max(200);
export const description = text.max(2000).allow(null, '');
export const transferIds = Joi.array().items(id).unique().max(MAX_TRANSFERS_PER_CALL);

export const collectionParams = Joi.object<{ id: string }>({ id: id.required() });
export const shareCodeParams = Joi.object<{ code: string }>({
  code: Joi.string().alphanum().min(4).max(32).required(),
});

export const collectionTransfer = Joi.object({
  id: id.required().description('The transfer id.'),
  object: Joi.string().valid('collection_transfer').required(),
  position: Joi.number().integer().min(0).required().description('0 for the first; always dense.'),
  added_at: timestamp.required(),
  short_code: Joi.string().required(),
  transfer_title: Joi.string().allow(null).required(),
  status: transferStatus.required(),
  encryption_mode: Joi.string()
    .valid(...ENCRYPTION_MODES)
    .required(),
  password_protected: Joi.boolean().required(),
  expires_at: timestamp.required(),
  share_url: Joi.string().uri().required().description("The transfer's own share link."),
}).label('CollectionTransfer');

const collectionFields = {
  id: id.required(),
  object: Joi.string().valid('collection').required(),
  title: Joi.string().required(),
  description: Joi.string().allow(null, '').required(),
  transfer_count: Joi.number().integer().min(0).required(),
  share_url: Joi.string()
    .uri()
    .allow(null)
    .required()
    .description('The public page `/c/{code}`; null while the link is turned off.'),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
};

export const collectionSummary = Joi.object(collectionFields).label('CollectionSummary');

export const collection = Joi.object({
  ...collectionFields,
  transfers: Joi.array().items(collectionTransfer).required().description('In order, whatever their state.'),
}).label('Collection');

export const collectionList = listEnvelope(collectionSummary, 'CollectionList');

export const deletedCollection = Joi.object({
  id: id.required(),
  object: Joi.string().valid('collection').required(),
  deleted: Joi.boolean().valid(true).required(),
}).label('DeletedCollection');

export const sharedCollectionTransfer = Joi.object({
  id: id.required().description('The transfer id, for download-links.'),
  access: Joi.string()
    .valid(...COLLECTION_ACCESS)
    .required()
    .description(
      '`open`: files listed; `password`: its password first; `own_link`: end-to-end, only its own link can download it.',
    ),
  transfer_title: Joi.string().allow(null).required().description('null behind a password'),
  encryption_mode: Joi.string()
    .valid(...ENCRYPTION_MODES)
    .required(),
  password_required: Joi.boolean().required(),
  expires_at: timestamp.required(),
  downloads_remaining: Joi.number().integer().min(0).allow(null).required(),
  scan_warning: Joi.string().allow(null).required(),
  files: Joi.array().items(sharedFile).allow(null).required().description('Listed only when `access` is `open`.'),
}).label('SharedCollectionTransfer');

export const sharedCollection = Joi.object({
  object: Joi.string().valid('shared_collection').required(),
  title: Joi.string().required(),
  description: Joi.string().allow(null, '').required(),
  transfers: Joi.array()
    .items(sharedCollectionTransfer)
    .required()
    .description('Only the transfers that can be downloaded now, in order.'),
}).label('SharedCollection');
