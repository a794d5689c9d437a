import type { QueryValue, RequestOptions } from '../client.ts';
import { ValiseError } from '../errors.ts';
import type { PageRequest } from '../pagination.ts';
import { resolveRoute } from '../routes.ts';
import type {
  AuditEntry,
  AuditVerification,
  ExportAuditParams,
  ExportedAuditEntry,
  ListAuditParams,
} from '../types.ts';
import { Resource } from './resource.ts';

/** The workspace audit log (scope `audit:read`, rate class `expensive`; exports need `audit:export`). */
export class Audit extends Resource {
  list(params: ListAuditParams = {}, options?: RequestOptions): PageRequest<AuditEntry> {
    return this.paged('audit.list', { query: params, options });
  }

  /** Walks the calling environment's hash chain and reports its first broken link, if any. */
  verify(options?: RequestOptions): Promise<AuditVerification> {
    return this.call('audit.verify', { options });
  }

  /**
   * The export as the server streams it (NDJSON or CSV, by `params.format`), body unread: pipe
   * `response.body` to a file. The file name the server suggests is in Content-Disposition.
   */
  download(params: ExportAuditParams = {}, options: RequestOptions = {}): Promise<Response> {
    const { method, path } = resolveRoute('audit.export');
    return this.http.send({
      ...options,
      method,
      path,
      query: params as Record<string, QueryValue>,
      headers: { accept: '*/*' },
      timeoutMs: options.timeoutMs ?? this.http.transferTimeoutMs,
    });
  }

  /** Every exported entry, oldest first, with its chain fields: the NDJSON export read a line at a time. */
  async *export(
    params: Omit<ExportAuditParams, 'format'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<ExportedAuditEntry> {
    const response = await this.download({ ...params, format: 'ndjson' }, options);
    if (!response.body) throw new ValiseError({ code: 'unexpected_response', message: 'The export had no body.' });
    let pending = '';
    for await (const text of response.body.pipeThrough(new TextDecoderStream())) {
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line) yield JSON.parse(line) as ExportedAuditEntry;
    }
    if (pending.trim()) yield JSON.parse(pending) as ExportedAuditEntry;
  }
}
