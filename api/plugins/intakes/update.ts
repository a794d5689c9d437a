import Joi from 'joi';
import { type UpdateIntakeInput, updateIntake } from '../../../lib/intakes/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import {
  expiresInHours,
  instructions,
  intake,
  intakeParams,
  limits,
  metadataPolicy,
  notify,
  retentionHours,
  title,
} from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/intakes/{id}',
  options: {
    id: 'intakes.update',
    description: 'Update an intake',
    notes:
      '`retention_hours` applies to documents received afterwards. `expires_in_hours` counts from now; `null` removes ' +
      'the expiry. Lifting what closed an intake (its expiry, or `max_submissions`) reopens it. The encryption mode and ' +
      'the owner key never change: create another intake.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:write', audit: { action: 'intake.update', resourceType: 'intake' } } },
    validate: {
      params: intakeParams,
      payload: Joi.object<UpdateIntakeInput>({
        title,
        instructions,
        metadata_policy: metadataPolicy,
        retention_hours: retentionHours,
        limits,
        notify,
        expires_in_hours: expiresInHours.allow(null),
      })
        .min(1)
        .label('UpdateIntake'),
    },
    response: { schema: intake },
  },
  handler: (request) =>
    updateIntake(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
