import Joi from 'joi';
import { type CreatePublishableKeyInput, createPublishableKey } from '../../../lib/intakes/owner-keys.ts';
import { defineRoute, orNull } from '../../route.ts';
import { text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { intakeParams, publishableKey } from './schemas.ts';

export const keysCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/intakes/{id}/publishable-keys',
  options: {
    id: 'intakes.createPublishableKey',
    description: 'Create a publishable key for an intake',
    notes:
      'A `cip_…` key, safe to embed in a web page: it can read this intake\u2019s form and submit to it, nothing else.',
    tags: ['api', 'intakes'],
    plugins: {
      valise: { scope: 'intake:write', audit: { action: 'intake.publishable_key_create', resourceType: 'intake' } },
    },
    validate: {
      params: intakeParams,
      // The body is optional: none is no label.
      payload: orNull(
        Joi.object<CreatePublishableKeyInput>({ label: text.trim().max(100).allow(null, '') }).label(
          'CreatePublishableKey',
        ),
      ),
    },
    response: { status: { 201: publishableKey } },
  },
  handler: async (request, h) =>
    h
      .response(
        await createPublishableKey(
          request.server.app.services,
          callerOf(request),
          request.params.id,
          request.payload ?? {},
        ),
      )
      .code(201),
});
