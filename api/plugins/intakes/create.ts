import Joi from 'joi';
import { type CreateIntakeInput, createIntake } from '../../../lib/intakes/service.ts';
import { INTAKE_ENCRYPTION_MODES } from '../../../lib/intakes/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import {
  expiresInHours,
  instructions,
  intakeWithKey,
  limits,
  metadataPolicy,
  notify,
  ownerPublicKey,
  retentionHours,
  title,
} from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/intakes',
  options: {
    id: 'intakes.create',
    description: 'Create a secure intake',
    notes:
      'An intake receives files from people without an account. `e2e_asym` (the default when `owner_public_key` is sent) ' +
      'encrypts in the submitter\u2019s browser to your public key: Valise cannot read the files. The answer carries a ' +
      'first publishable key (`publishable_key.key`, `cip_…`) to embed in a page.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:write', audit: { action: 'intake.create', resourceType: 'intake' } } },
    validate: {
      payload: Joi.object<CreateIntakeInput>({
        title: title.required(),
        instructions,
        encryption_mode: Joi.string().valid(...INTAKE_ENCRYPTION_MODES),
        owner_public_key: ownerPublicKey,
        metadata_policy: metadataPolicy,
        retention_hours: retentionHours,
        limits,
        notify,
        expires_in_hours: expiresInHours,
      }).label('CreateIntake'),
    },
    response: { status: { 201: intakeWithKey } },
  },
  handler: async (request, h) =>
    h.response(await createIntake(request.server.app.services, callerOf(request), request.payload)).code(201),
});
