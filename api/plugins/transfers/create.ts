import Joi from 'joi';
import { MAX_RECIPIENTS_PER_TRANSFER } from '../../../lib/recipients/links.ts';
import { type CreateTransferInput, createTransfer } from '../../../lib/transfers/create.ts';
import { SHARE_PASSWORD_RULE, sharePasswordProblem } from '../../../lib/transfers/share-passwords.ts';
import { ENCRYPTION_MODES } from '../../../lib/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { fileName, mimeType, text, titleText } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { allowedCountriesInput, createdTransfer } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/transfers',
  options: {
    id: 'transfers.create',
    description: 'Create a transfer',
    notes:
      'Returns the transfer, its share_url and one upload URL per file. Upload each file with one PUT (resumable, see docs/transfers.md). Sandbox limits: 10 MiB per file, 10 files, 25 transfers per 24 h, 5 downloads. A `password` needs 8 to 256 characters, neither one character repeated nor a run such as `12345678` (400 `validation_error`, `param: password`). Each address of `recipient` and `recipients` (at most 50 in all) joins the address book and is mailed a personal link once the transfer is active (and approved); `transfer.recipients` lists them with their links.',
    tags: ['api', 'transfers'],
    plugins: { valise: { scope: 'transfers:write', audit: { action: 'transfer.create', resourceType: 'transfer' } } },
    validate: {
      payload: Joi.object<CreateTransferInput>({
        files: Joi.array()
          .items(
            Joi.object({
              name: fileName.required(),
              size: Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).required(),
              mime_type: mimeType,
            }),
          )
          .min(1)
          .required(),
        expires_in_hours: Joi.number().positive().max(1_000_000),
        max_downloads: Joi.number().integer().min(1).max(1_000_000),
        // min() publishes the floor in the OpenAPI document (minLength); the rule itself counts NFC characters.
        password: text
          .min(SHARE_PASSWORD_RULE.minLength)
          .max(SHARE_PASSWORD_RULE.maxLength)
          .custom((value: string, helpers) => {
            const problem = sharePasswordProblem(value);
            return problem ? helpers.message({ custom: `\`password\` ${problem}` }) : value;
          }),
        recipient: Joi.string().email({ tlds: false }).max(320),
        recipients: Joi.array()
          .items(Joi.string().trim().email({ tlds: false }).max(254))
          .max(MAX_RECIPIENTS_PER_TRANSFER)
          .description(
            'More addresses to send the transfer to, each mailed a personal link; with `recipient`, the union, ' +
              'each address once whatever its case (docs/recipients.md).',
          ),
        transfer_title: titleText.max(200).allow(''),
        encryption_mode: Joi.string()
          .valid(...ENCRYPTION_MODES)
          .default('server'),
        approval_required: Joi.boolean().default(false),
        allowed_countries: allowedCountriesInput,
      }).label('CreateTransfer'),
    },
    response: { status: { 201: createdTransfer } },
  },
  handler: async (request, h) => {
    const created = await createTransfer(request.server.app.services, callerOf(request), request.payload);
    return h.response(created).code(201);
  },
});
