import Joi from 'joi';
import { type RotateApiKeyInput, rotateApiKey } from '../../../lib/api-keys/service.ts';
import { defineRoute, orNull } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { mfaCode, rotatedApiKey } from './schemas.ts';

export const rotateRoute = defineRoute({
  method: 'POST',
  path: '/v1/api-keys/{id}/rotate',
  options: {
    id: 'apiKeys.rotate',
    description: 'Rotate an API key',
    notes:
      'Issues a new value (returned once) and keeps the old value working for `grace_period_hours` (default 24, 0 to 168), then stops it. The key keeps its id, scopes and settings. A key with sensitive scopes needs `mfa_code`; a key holding a scope the calling key lacks cannot be rotated by it (403 `scope_missing`).',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage', audit: { action: 'api_key.rotate', resourceType: 'api_key' } } },
    validate: {
      params: idParams,
      payload: orNull(
        Joi.object<RotateApiKeyInput>({ grace_period_hours: Joi.number().min(0).max(168), mfa_code: mfaCode }),
      ).label('RotateApiKey'),
    },
    response: { status: { 200: rotatedApiKey } },
  },
  handler: (request) =>
    rotateApiKey(request.server.app.services, callerOf(request), request.params.id, request.payload ?? {}),
});
