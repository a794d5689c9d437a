import Joi from 'joi';
import { type UpdateTransferInput, updateTransfer } from '../../../lib/transfers/manage.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { allowedCountriesInput, transfer } from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/transfers/{id}',
  options: {
    id: 'transfers.update',
    description: 'Change a transfer',
    notes:
      'Changes `allowed_countries` (null lifts the restriction); a member left out is kept, an empty body is a 400 `validation_error`. Takes effect for every later download, download and archive links already issued included. 404 `not_found` when the transfer is absent or out of reach.',
    tags: ['api', 'transfers'],
    plugins: { valise: { scope: 'transfers:write', audit: { action: 'transfer.update', resourceType: 'transfer' } } },
    validate: {
      params: idParams,
      payload: Joi.object<UpdateTransferInput>({ allowed_countries: allowedCountriesInput })
        .min(1)
        .label('UpdateTransfer'),
    },
    response: { schema: transfer },
  },
  handler: (request) =>
    updateTransfer(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
