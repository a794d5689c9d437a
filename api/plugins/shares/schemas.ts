import Joi from 'joi';

export const codeParams = Joi.object({ code: Joi.string().alphanum().min(4).max(32).required() });
