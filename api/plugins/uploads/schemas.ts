import Joi from 'joi';
import { transferFile } from '../transfers/schemas.ts';

export const uploadToken = Joi.string()
  .max(1024)
  .pattern(/^[\w-]+\.[\w-]+$/, 'token');

export const uploadStatus = transferFile
  .keys({ upload_offset: Joi.number().integer().min(0).required() })
  .label('UploadStatus');
