import { z } from 'zod';
import { REVOCATION_REASONS } from '../vocabulary.ts';
import { EMITTED, event } from './define.ts';
import { ApiKeyEventView as api_key } from './views.ts';

// api_key.*: what the API-key routes, `admin bootstrap` and the key timers record.

/** The members `PATCH /v1/api-keys/{id}` changes, as `api_key.updated` names them (never `mfa_code`). */
export const API_KEY_UPDATABLE = ['name', 'description', 'is_active', 'allowed_ips', 'scopes', 'max_uses'] as const;

export const API_KEY_EVENTS = {
  'api_key.created': event(
    'An API key was created (`POST /v1/api-keys`, or one key per environment by `admin bootstrap`).',
    { api_key },
    EMITTED,
  ),
  'api_key.updated': event(
    'An API key was changed (`PATCH /v1/api-keys/{id}`).',
    {
      api_key,
      changed: z
        .array(z.enum(API_KEY_UPDATABLE).describe('A member name.'))
        .describe('The members the request sent (never `mfa_code`), whether or not their value differed.'),
    },
    EMITTED,
  ),
  'api_key.revoked': event(
    'An API key was revoked (`DELETE /v1/api-keys/{id}`); it stopped authenticating at once. Fires once per key.',
    { api_key, reason: z.enum(REVOCATION_REASONS).describe('The revocation reason; `manual` by default.') },
    EMITTED,
  ),
  'api_key.rotated': event(
    'An API key got a new value (`POST /v1/api-keys/{id}/rotate`); older values work until the grace period ends.',
    { api_key, previous_key_valid_until: z.iso.datetime().describe('When the previous values stop authenticating.') },
    EMITTED,
  ),
  'api_key.expired': event(
    'An API key reached its `expires_at` (recorded by the `expireApiKey` workflow).',
    { api_key },
    EMITTED,
  ),
};
