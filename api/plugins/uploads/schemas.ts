import Joi from 'joi';

export const uploadToken = Joi.string()
  .max(1024)
  .pattern(/^[\w-]+\.[\w-]+$/, 'token');
