import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  ApiKey,
  CreateApiKeyParams,
  CreatedApiKey,
  RevokeApiKeyParams,
  RevokedApiKey,
  RotateApiKeyParams,
  RotatedApiKey,
  UpdateApiKeyParams,
} from '../types.ts';
import { Resource } from './resource.ts';

/** API keys (scope `api_keys:manage`). Key values are shown once, in `create` and `rotate` answers. */
export class ApiKeys extends Resource {
  list(params: { limit?: number } = {}, options?: RequestOptions): PageRequest<ApiKey> {
    return this.paged('apiKeys.list', { query: params, options });
  }

  /** Keys granting sensitive scopes need `mfa_code`; without it the call fails with `mfa_required`. */
  create(params: CreateApiKeyParams, options?: RequestOptions): Promise<CreatedApiKey> {
    return this.call('apiKeys.create', { body: params, options });
  }

  get(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.call('apiKeys.get', { params: { id }, options });
  }

  update(id: string, params: UpdateApiKeyParams, options?: RequestOptions): Promise<ApiKey> {
    return this.call('apiKeys.update', { params: { id }, body: params, options });
  }

  revoke(id: string, params: RevokeApiKeyParams = {}, options?: RequestOptions): Promise<RevokedApiKey> {
    return this.call('apiKeys.revoke', { params: { id }, body: params, options });
  }

  rotate(id: string, params: RotateApiKeyParams = {}, options?: RequestOptions): Promise<RotatedApiKey> {
    return this.call('apiKeys.rotate', { params: { id }, body: params, options });
  }
}
