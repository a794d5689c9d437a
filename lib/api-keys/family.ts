import type { Family } from '../family.ts';
import { KEY_TYPES } from '../vocabulary.ts';

export const apiKeysFamily = {
  name: 'api-keys',
  openapi: { tag: 'api-keys', description: 'API keys of the workspace: minting, scopes, rotation, revocation.' },
  tables: {
    api_keys: { scope: { kind: 'tenant' }, personal: [], vocabulary: { key_type: KEY_TYPES } },
    api_key_secrets: { scope: { kind: 'child', parent: 'api_keys', column: 'api_key_id' }, personal: [] },
  },
} satisfies Family;
