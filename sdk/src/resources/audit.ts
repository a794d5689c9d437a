import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type { AuditEntry, ListAuditParams } from '../types.ts';
import { Resource } from './resource.ts';

/** The workspace audit log (scope `audit:read`, rate class `expensive`). */
export class Audit extends Resource {
  list(params: ListAuditParams = {}, options?: RequestOptions): PageRequest<AuditEntry> {
    return this.paged('audit.list', { query: params, options });
  }
}
