import Joi from 'joi';
import { type CreateScimTokenInput, createScimToken } from '../../../lib/scim/tokens.ts';
import { defineRoute, orNull } from '../../route.ts';
import { text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { scimTokenWithValue } from './schemas.ts';

export const createTokenRoute = defineRoute({
  method: 'POST',
  path: '/v1/scim/tokens',
  options: {
    id: 'scim.createToken',
    description: 'Create a SCIM token',
    notes:
      "The bearer token an identity provider (Entra ID, Okta) sends to /v1/scim/Users and /v1/scim/Groups; returned once (`token`, `scim_…`). Live keys only (403 `forbidden` otherwise): the workspace's members are shared by every environment. Needs a current verification code in `mfa_code` (401 `mfa_required`).",
    tags: ['api', 'scim'],
    plugins: {
      valise: { scope: 'api_keys:manage', audit: { action: 'scim_token.create', resourceType: 'scim_token' } },
    },
    validate: {
      payload: orNull(
        Joi.object<CreateScimTokenInput>({
          name: text.trim().max(100).allow(''),
          mfa_code: Joi.string().max(16),
        }).label('CreateScimToken'),
      ),
    },
    response: { status: { 201: scimTokenWithValue } },
  },
  handler: async (request, h) =>
    h.response(await createScimToken(request.server.app.services, callerOf(request), request.payload ?? {})).code(201),
});
