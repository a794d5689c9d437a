import Joi from 'joi';
import { type StartSubmissionInput, startSubmission } from '../../../lib/intakes/submissions.ts';
import { INTAKE_KEMS, INTAKE_SOURCES } from '../../../lib/intakes/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { fileName, mimeType, text } from '../../schemas.ts';
import { submitterOf } from '../../types.ts';
import { intakeParams, submission } from './schemas.ts';

const base64url = Joi.string().pattern(/^[A-Za-z0-9_-]+$/, 'base64url');

export const submitRoute = defineRoute({
  method: 'POST',
  path: '/v1/intakes/{id}/submissions',
  options: {
    id: 'intakes.submit',
    description: 'Start a submission (publishable key)',
    notes:
      'Authenticated by the intake\u2019s publishable key. Declares the files (plaintext `size`); end-to-end intakes ' +
      'also take the `envelope` (the content key wrapped to the owner, docs/intake-encryption.md) and each file\u2019s ' +
      '`iv`. Answers the document and an upload URL per file: upload exactly as for transfers (`PUT`, resumable with ' +
      '`Content-Range`, `HEAD` for the offset). Rate-limited per client address.',
    tags: ['api', 'intakes'],
    auth: 'publishable-key',
    // A closed or expired intake: 410 `not_found`.
    plugins: { valise: { openapi: { errors: [410] } } },
    validate: {
      params: intakeParams,
      payload: Joi.object<StartSubmissionInput>({
        files: Joi.array()
          .items(
            Joi.object({
              name: fileName.required(),
              size: Joi.number()
                .integer()
                .min(0)
                .max(5 * 1024 ** 4)
                .required(),
              mime_type: mimeType,
              iv: base64url.max(16),
            }),
          )
          .min(1)
          .max(1000)
          .required(),
        client_reference: text.trim().max(200),
        metadata: Joi.object().unknown(true).max(50),
        source: Joi.string().valid(...INTAKE_SOURCES),
        envelope: Joi.object({
          kem: Joi.string()
            .valid(...INTAKE_KEMS)
            .required(),
          wrapped_symmetric_key: base64url.max(4096).required(),
          chunk_size: Joi.number().integer().min(4096).max(16_777_216).required(),
        }),
      }).label('StartSubmission'),
    },
    response: { status: { 201: submission } },
  },
  handler: async (request, h) =>
    h.response(await startSubmission(request.server.app.services, submitterOf(request), request.payload)).code(201),
});
