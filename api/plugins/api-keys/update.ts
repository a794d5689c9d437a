import Joi from 'joi';
import { type UpdateApiKeyInput, updateApiKey } from '../../../lib/api-keys/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { allowedIps, apiKey, description, maxUses, mfaCode, name, scopes } from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/api-keys/{id}',
  options: {
    id: 'apiKeys.update',
    description: 'Update an API key',
    notes:
      'The key value is not regenerated. Adding a sensitive scope needs `mfa_code`; so does loosening a key stronger than the calling key (one holding a scope it lacks): re-activating it, clearing or widening `allowed_ips`, raising or lifting `max_uses`, adding scopes. Tightening needs no code. `max_uses: null` lifts the cap.',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage', audit: { action: 'api_key.update', resourceType: 'api_key' } } },
    validate: {
      params: idParams,
      payload: Joi.object<UpdateApiKeyInput>({
        name,
        description,
        is_active: Joi.boolean(),
        allowed_ips: allowedIps,
        scopes,
        max_uses: maxUses.allow(null),
        mfa_code: mfaCode,
      })
        .min(1)
        .label('UpdateApiKey'),
    },
    response: { schema: apiKey },
  },
  handler: (request) =>
    updateApiKey(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
