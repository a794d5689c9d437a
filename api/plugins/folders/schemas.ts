import Joi from 'joi';
import { id, timestamp } from '../../schemas.ts';

export const folder = Joi.object({
  id: id.required(),
  object: Joi.string().valid('folder').required(),
  name: Joi.string().required(),
  transfer_count: Joi.number().integer().required(),
  created_at: timestamp.required(),
}).label('Folder');
