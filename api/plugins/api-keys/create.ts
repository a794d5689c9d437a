import Joi from 'joi';
import { type CreateApiKeyInput, createApiKey } from '../../../lib/api-keys/service.ts';
import { ENVIRONMENTS, KEY_TYPES } from '../../../lib/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { allowedIps, apiKeyWithValue, description, maxUses, mfaCode, name, scopes } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/api-keys',
  options: {
    id: 'apiKeys.create',
    description: 'Create an API key',
    notes:
      'The full key value is returned once. Granting a sensitive scope (a full key always does) needs `mfa_code`, a TOTP code each of whose time steps is accepted once. `environment` defaults to the calling key\'s own: a live key creates live and test keys, a test key test keys, a sandbox key sandbox keys; any other gives 403 `forbidden` (`param: "environment"`).',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage', audit: { action: 'api_key.create', resourceType: 'api_key' } } },
    validate: {
      payload: Joi.object<CreateApiKeyInput>({
        name: name.required(),
        description,
        environment: Joi.string().valid(...ENVIRONMENTS),
        key_type: Joi.string()
          .valid(...KEY_TYPES)
          .description(
            '`full` (every scope) or `restricted`. Absent: `restricted` when `scopes` is sent (other than `["*"]`), else `full`.',
          ),
        scopes,
        expires_in_days: Joi.number().positive().max(3650),
        allowed_ips: allowedIps,
        max_uses: maxUses,
        mfa_code: mfaCode,
      }).label('CreateApiKey'),
    },
    response: { status: { 201: apiKeyWithValue } },
  },
  handler: async (request, h) => {
    const created = await createApiKey(request.server.app.services, callerOf(request), request.payload);
    return h.response(created).code(201);
  },
});
