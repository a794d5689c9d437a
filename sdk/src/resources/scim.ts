import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  CreatedScimToken,
  CreateScimTokenParams,
  ListScimAuditParams,
  RevokedScimToken,
  ScimAuditList,
  ScimToken,
} from '../types.ts';
import { Resource } from './resource.ts';

/**
 * SCIM provisioning: the tokens identity providers (Entra ID, Okta) use, and the audit of what they
 * did. The SCIM protocol routes themselves are for identity providers, not wrapped here.
 */
export class Scim extends Resource {
  /** Scope `api_keys:manage`, a live key and a current `mfa_code`; the answer carries `token` (`scim_…`), shown this once. */
  createToken(params: CreateScimTokenParams, options?: RequestOptions): Promise<CreatedScimToken> {
    return this.call('scim.createToken', { body: params, options });
  }

  listTokens(options?: RequestOptions): PageRequest<ScimToken> {
    return this.paged('scim.listTokens', { options });
  }

  revokeToken(id: string, options?: RequestOptions): Promise<RevokedScimToken> {
    return this.call('scim.revokeToken', { params: { id }, options });
  }

  /** What identity providers did, newest first (scope `audit:read`); one page of `limit` (1..500, default 100). */
  audit(params: ListScimAuditParams = {}, options?: RequestOptions): Promise<ScimAuditList> {
    return this.call('scim.audit', { query: params, options });
  }
}
