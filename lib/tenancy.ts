import type { Environment, KeyType, MemberRole } from './vocabulary.ts';

// Who owns a row, and who is asking. Every tenant's data lives in one workspace and one of its
// environments (live, test, sandbox), and every query is confined to both: a `Tenant`. A `Caller`
// is the tenant a bearer key speaks for, with the key's identity and scopes.

/** The workspace and environment a query is confined to. */
export type Tenant = { workspaceId: string; environment: Environment };

/** Who is calling: resolved from the bearer key by the auth scheme. */
export type Caller = Tenant & {
  userId: string;
  apiKeyId: string;
  keyType: KeyType;
  scopes: string[];
  /**
   * The workspace's name and the user's email and role, read with the key (and cached with it,
   * forgotten on the same notice: migration 0024) so that GET /v1/me needs no query of its own.
   */
  profile?: CallerProfile;
};

export type CallerProfile = { workspaceName: string; userEmail: string; userRole: MemberRole };

/** The workspace and environment a caller's queries are confined to. */
export const tenantOf = (caller: Caller): Tenant => ({
  workspaceId: caller.workspaceId,
  environment: caller.environment,
});
