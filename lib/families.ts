import { analyticsFamily } from './analytics/family.ts';
import { apiKeysFamily } from './api-keys/family.ts';
import { auditFamily } from './audit/family.ts';
import { billingFamily } from './billing/family.ts';
import { coffresFamily } from './coffres/family.ts';
import { collectionsFamily } from './collections/family.ts';
import { eventsFamily } from './events/family.ts';
import type { Family } from './family.ts';
import { gdprFamily } from './gdpr/family.ts';
import { intakesFamily } from './intakes/family.ts';
import { legalFamily } from './legal/family.ts';
import { mcpFamily } from './mcp/family.ts';
import { recipientsFamily } from './recipients/family.ts';
import { rulesFamily } from './rules/family.ts';
import { scimFamily } from './scim/family.ts';
import { transfersFamily } from './transfers/family.ts';
import { foldersFamily } from './transfers/folders-family.ts';
import { webhooksFamily } from './webhooks/family.ts';
import { workspacesFamily } from './workspaces/family.ts';

// Every resource family, listed once (lib/family.ts says what each declares).
export const FAMILIES: readonly Family[] = [
  workspacesFamily,
  apiKeysFamily,
  transfersFamily,
  foldersFamily,
  recipientsFamily,
  collectionsFamily,
  intakesFamily,
  coffresFamily,
  webhooksFamily,
  rulesFamily,
  auditFamily,
  eventsFamily,
  legalFamily,
  gdprFamily,
  scimFamily,
  billingFamily,
  analyticsFamily,
  mcpFamily,
];

/** Every family's stored files, for the sweeper. */
export const STORED_FILES = FAMILIES.flatMap((family) => family.storedFiles ?? []);

/** Every column of keyring-wrapped values, with its table and AAD: what a master-key rotation re-wraps. */
export const KEY_WRAPPED_COLUMNS = FAMILIES.flatMap((family) =>
  Object.entries(family.tables).flatMap(([table, { keyWrapped }]) =>
    Object.entries(keyWrapped ?? {}).map(([column, { aad }]) => ({ table, column, aad })),
  ),
);
