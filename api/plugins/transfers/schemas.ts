import Joi from 'joi';
import { COUNTRY_CODES, isCountryCode } from '../../../lib/net/countries.ts';
import { APPROVAL_STATUSES, ENCRYPTION_MODES, TRANSFER_STATUSES, UPLOAD_STATES } from '../../../lib/vocabulary.ts';
import { id, listEnvelope, timestamp } from '../../schemas.ts';
import { transferRecipient } from '../recipients/schemas.ts';

export const transferStatus = Joi.string().valid(...TRANSFER_STATUSES);

/**
 * `allowed_countries` as a request gives it (docs/transfers.md, "Countries"): ISO 3166-1 alpha-2
 * codes of lib/net/countries.ts in either case, stored in upper case, each once; null restricts nothing.
 */
export const allowedCountriesInput = Joi.array()
  .items(
    Joi.string()
      .trim()
      .pattern(/^[A-Za-z]{2}$/, 'two letters (ISO 3166-1 alpha-2)')
      .custom((code: string, helpers) =>
        isCountryCode(code.toUpperCase())
          ? code.toUpperCase()
          : helpers.message({ custom: `{{#label}} is not an ISO 3166-1 alpha-2 country code` }),
      ),
  )
  .min(1)
  .max(COUNTRY_CODES.length)
  .custom((codes: string[]) => [...new Set(codes)])
  .allow(null)
  .description(
    'The only countries (ISO 3166-1 alpha-2, either case, stored in upper case) the transfer may be downloaded from; ' +
      'a download from elsewhere, or from an address whose country is not known, is refused with 403 `forbidden`, ' +
      '`reason: geo_blocked`. Null or absent: no restriction (docs/transfers.md, "Countries").',
  );

export const transferFile = Joi.object({
  id: id.required(),
  object: Joi.string().valid('transfer_file').required(),
  name: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  mime_type: Joi.string().required(),
  upload_state: Joi.string()
    .valid(...UPLOAD_STATES)
    .required(),
  bytes_received: Joi.number().integer().min(0).required(),
  sha256: Joi.string().hex().length(64).allow(null).required(),
  scan_status: Joi.string().allow(null).required(),
}).label('TransferFile');

export const transfer = Joi.object({
  id: id.required(),
  object: Joi.string().valid('transfer').required(),
  short_code: Joi.string().required(),
  transfer_title: Joi.string().allow(null).required(),
  status: transferStatus.required(),
  status_reason: Joi.string().allow(null).required(),
  encryption_mode: Joi.string()
    .valid(...ENCRYPTION_MODES)
    .required(),
  scan_status: Joi.string().allow(null).required(),
  expires_at: timestamp.required(),
  total_downloads: Joi.number().integer().required(),
  max_downloads: Joi.number().integer().allow(null).required(),
  password_protected: Joi.boolean().required(),
  recipient: Joi.string().allow(null).required().description('The first address the transfer was sent to.'),
  recipients: Joi.array()
    .items(transferRecipient)
    .required()
    .description('Every address the transfer was sent to, with its personal link and downloads.'),
  share_url: Joi.string().uri().required(),
  approval_required: Joi.boolean().required(),
  approval_status: Joi.string()
    .valid(...APPROVAL_STATUSES)
    .allow(null)
    .required(),
  approved_at: timestamp.allow(null).required(),
  approved_by: id.allow(null).required(),
  approval_note: Joi.string().allow(null, '').required(),
  folder_id: id.allow(null).required(),
  tags: Joi.array().items(Joi.string()).required(),
  archived_at: timestamp
    .allow(null)
    .required()
    .description('Set by an `archive_transfer` rule; see docs/transfers.md.'),
  allowed_countries: Joi.array()
    .items(Joi.string().pattern(/^[A-Z]{2}$/))
    .allow(null)
    .required()
    .description('The only countries the transfer may be downloaded from, upper case; null: no restriction.'),
  workspace_id: id.required(),
  user_id: id.required(),
  created_at: timestamp.required(),
  files: Joi.array().items(transferFile).required(),
}).label('Transfer');

export const uploadUrl = Joi.object({
  file_id: id.required(),
  name: Joi.string().required(),
  size: Joi.number().integer().required(),
  method: Joi.string().valid('PUT').required(),
  url: Joi.string().uri().required(),
  headers: Joi.object().pattern(Joi.string(), Joi.string()).required(),
  expires_at: timestamp.required(),
  resumable: Joi.boolean().required(),
  part_size: Joi.number().integer().required(),
}).label('UploadUrl');

export const createdTransfer = Joi.object({
  transfer: transfer.required(),
  upload_urls: Joi.array().items(uploadUrl).required(),
  share_url: Joi.string().uri().required(),
}).label('CreatedTransfer');

export const transferList = listEnvelope(transfer, 'TransferList');

export const folderLink = Joi.object({
  object: Joi.string().valid('transfer_folder').required(),
  transfer_id: id.required(),
  folder_id: id.allow(null).required(),
}).label('TransferFolder');
