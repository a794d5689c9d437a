import Joi from 'joi';
import { BLOCKED_REASONS, ENCRYPTION_MODES } from '../../../lib/vocabulary.ts';
import { orNull } from '../../route.ts';
import { id, text, timestamp } from '../../schemas.ts';
import { transferStatus } from '../transfers/schemas.ts';

export const codeParams = Joi.object<{ code: string }>({ code: Joi.string().alphanum().min(4).max(32).required() });

// What a recipient sees: no owner, recipient, tags or download history; and
// behind a password, nothing about the content until it is unlocked.
export const sharedFile = Joi.object({
  id: id.required(),
  name: Joi.string().required(),
  size: Joi.number().integer().min(0).required(),
  mime_type: Joi.string().required(),
  sha256: Joi.string().hex().length(64).allow(null).required(),
}).label('SharedFile');

export const sharedTransfer = Joi.object({
  object: Joi.string().valid('shared_transfer').required(),
  short_code: Joi.string().required(),
  transfer_title: Joi.string()
    .allow(null)
    .required()
    .description('null until a password-protected transfer is unlocked'),
  status: transferStatus.required(),
  available: Joi.boolean().required(),
  blocked_reason: Joi.string()
    .valid(...BLOCKED_REASONS)
    .allow(null)
    .required(),
  message: Joi.string().allow(null).required(),
  scan_warning: Joi.string()
    .allow(null)
    .required()
    .description('Set when files were too large to be scanned for malware: a warning to show the recipient.'),
  encryption_mode: Joi.string()
    .valid(...ENCRYPTION_MODES)
    .required(),
  password_required: Joi.boolean().required(),
  expires_at: timestamp.required(),
  downloads_remaining: Joi.number().integer().min(0).allow(null).required(),
  files: Joi.array()
    .items(sharedFile)
    .allow(null)
    .required()
    .description('null until a password-protected transfer is unlocked (POST /v1/shares/{code}/unlock)'),
}).label('SharedTransfer');

export const passwordOnly = orNull(Joi.object<{ password?: string }>({ password: text.max(256) })).label(
  'UnlockRequest',
);

export const downloadLinks = Joi.object({
  object: Joi.string().valid('download_links').required(),
  total_downloads: Joi.number().integer().min(1).required(),
  files: Joi.array()
    .items(
      Joi.object({
        file_id: id.required(),
        name: Joi.string().required(),
        size: Joi.number().integer().min(0).required(),
        download_url: Joi.string().uri().required(),
        download_expires_in: Joi.number().integer().min(1).required(),
      }).label('DownloadLink'),
    )
    .required(),
}).label('DownloadLinks');

export const archiveLink = Joi.object({
  object: Joi.string().valid('archive_link').required(),
  archive_url: Joi.string()
    .uri()
    .required()
    .description('GET it to stream the ZIP: valid `archive_expires_in` seconds'),
  archive_expires_in: Joi.number().integer().min(1).required(),
  size: Joi.number().integer().min(0).required().description("The archive's exact length in bytes"),
  filename: Joi.string().required(),
  total_downloads: Joi.number()
    .integer()
    .min(1)
    .description("The transfer's downloads, this one included (absent for a collection's archive)"),
}).label('ArchiveLink');
