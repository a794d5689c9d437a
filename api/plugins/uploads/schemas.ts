import Joi from 'joi';
import { ITEM_ID_PATTERN } from '../../../lib/coffres/ids.ts';
import { UPLOADED_FILE_OBJECTS } from '../../../lib/uploads/receive.ts';
import { id } from '../../schemas.ts';
import { transferFile } from '../transfers/schemas.ts';

export const uploadToken = Joi.string()
  .max(1024)
  .pattern(/^[\w-]+\.[\w-]+$/, 'token');

/** Whoever owns the file (a transfer, an intake document, a vault), the upload routes answer this. */
export const uploadStatus = transferFile
  .keys({
    // Vault items are named `cofi_…`.
    id: Joi.alternatives(id, Joi.string().pattern(ITEM_ID_PATTERN, 'item id')).required(),
    object: Joi.string()
      .valid(...UPLOADED_FILE_OBJECTS)
      .required(),
    upload_offset: Joi.number().integer().min(0).required(),
    part_size: Joi.number()
      .integer()
      .min(1)
      .required()
      .description("The file's part size: a chunk sent with `Content-Range` ends on a multiple of it, or at the end."),
    upload_in_progress: Joi.boolean()
      .required()
      .description(
        'A request is sending this file now (it holds the upload lease): a `PUT` is answered 409 until it ends, or until its lease lapses if it crashed. Wait and ask again.',
      ),
  })
  .label('UploadStatus');

/** The answer of a tus method: headers only (hapi sends no body for `h.response()`). */
export const noBody = Joi.any().valid(null, '');
