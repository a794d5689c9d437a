import type { Request } from '@hapi/hapi';
import Joi from 'joi';
import { AUDIT_EXPORT_FORMATS, type AuditExportFormat, exportAudit } from '../../../lib/audit/export.ts';
import { type AuditFilterQuery, auditFiltersOf } from '../../../lib/audit/list.ts';
import { tenantOf } from '../../../lib/tenancy.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { auditFilters } from './list.ts';

type ExportQuery = AuditFilterQuery & { format: AuditExportFormat };

const FILTER_NAMES = ['action', 'actor_id', 'resource_type', 'since', 'until'] as const;

/** The filters an export asked for, as its audit entry records them (raw when the query was refused). */
function requestedFilters(request: Request): Record<string, unknown> {
  const query = request.query as Record<string, unknown>;
  const filters: Record<string, string> = {};
  for (const name of FILTER_NAMES) {
    const value = query[name];
    if (value instanceof Date) filters[name] = value.toISOString();
    else if (typeof value === 'string') filters[name] = value.slice(0, 200);
  }
  const format = typeof query.format === 'string' ? query.format.slice(0, 20) : 'ndjson';
  return { format, filters };
}

export const exportAuditRoute = defineRoute<Record<string, never>, ExportQuery>({
  method: 'GET',
  path: '/v1/audit/export',
  options: {
    id: 'audit.export',
    description: 'Export the audit log',
    notes:
      "Every entry the filters keep (those of `GET /v1/audit`), oldest first, as NDJSON (`application/x-ndjson`, one entry a line) or CSV (`text/csv`, RFC 4180, a header row, formula-like cells prefixed with `'`), streamed. Each entry carries its chain fields (`seq`, `prev_hash`, `entry_hash`, `personal_digest`, `collapsed`, `erased_at`) for offline verification. Covers the log as it stood when asked. Audited as `audit.exported` with its filters. Needs the sensitive scope `audit:export`.",
    tags: ['api', 'audit'],
    plugins: {
      valise: {
        scope: 'audit:export',
        rateClass: 'expensive',
        audit: { action: 'audit.exported', resourceType: 'audit_log', metadata: requestedFilters },
        openapi: { binary: [200] },
      },
    },
    validate: {
      query: Joi.object<ExportQuery>({
        format: Joi.string()
          .valid(...AUDIT_EXPORT_FORMATS)
          .default('ndjson'),
        ...auditFilters,
      }),
    },
    timeout: { socket: false },
  },
  handler: async (request, h) => {
    const { format, ...filters } = request.query;
    const exported = await exportAudit(
      request.server.app.services,
      tenantOf(callerOf(request)),
      auditFiltersOf(filters),
      format,
    );
    return h
      .response(exported.body)
      .type(exported.contentType)
      .header('Content-Disposition', `attachment; filename="${exported.fileName}"`)
      .header('Cache-Control', 'no-store');
  },
});
