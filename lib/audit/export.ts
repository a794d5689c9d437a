import { Readable } from 'node:stream';
import { type AuditFilters, createAuditQueries, type ExportedEntryRow } from '../db/queries/audit.ts';
import type { Services } from '../services.ts';
import type { Tenant } from '../tenancy.ts';

// The audit log as a file (docs/audit.md, "Export"): every entry the filters keep, oldest first,
// with its chain fields, read a batch at a time as the client takes the bytes, so memory stays
// flat whatever the size. The export covers the chain as it stood when it was asked for: the
// entries written while it streams (its own `audit.exported` among them) are not in it.

export const AUDIT_EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

const BATCH = 2000;

/** The columns of a CSV export, in order; NDJSON lines carry the same fields. */
const CSV_COLUMNS = [
  'id',
  'seq',
  'created_at',
  'workspace_id',
  'environment',
  'actor_id',
  'api_key_id',
  'action',
  'resource_type',
  'resource_id',
  'status',
  'request_id',
  'ip_address',
  'user_agent',
  'country_code',
  'metadata',
  'collapsed',
  'erased_at',
  'personal_digest',
  'prev_hash',
  'entry_hash',
] as const;

export type AuditExport = { body: Readable; contentType: string; fileName: string };

export async function exportAudit(
  services: Services,
  tenant: Tenant,
  filters: AuditFilters,
  format: AuditExportFormat,
  now = new Date(),
): Promise<AuditExport> {
  const queries = createAuditQueries(services.db);
  const upTo = await queries.lastSeq(tenant);
  // The next batch is asked for before this one is written out, so the database's work and ours
  // overlap; at most two batches are in memory.
  const batchAfter = (after: number) => {
    const batch = queries.exportBatch(tenant, filters, { after, upTo }, BATCH);
    // Awaited below, unless the client has gone: then its failure must not go unhandled.
    batch.catch(() => {});
    return batch;
  };
  async function* entries(): AsyncGenerator<ExportedEntryRow> {
    let next: Promise<readonly ExportedEntryRow[]> | null = batchAfter(0);
    while (next) {
      const batch: readonly ExportedEntryRow[] = await next;
      const last = batch.at(-1);
      next = last && batch.length === BATCH ? batchAfter(last.seq) : null;
      yield* batch;
    }
  }
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const fileName = `audit-${tenant.environment}-${stamp}.${format}`;
  const lines = format === 'csv' ? csvLines(entries()) : ndjsonLines(entries());
  const contentType = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson';
  return { body: Readable.from(chunked(lines), { objectMode: false }), contentType, fileName };
}

/** One JSON object a line, the fields in CSV_COLUMNS' order, metadata as the database wrote it. */
async function* ndjsonLines(entries: AsyncIterable<ExportedEntryRow>): AsyncGenerator<string> {
  for await (const entry of entries) {
    let line = '{"object":"audit_entry"';
    for (const column of CSV_COLUMNS) {
      line += `,"${column}":${column === 'metadata' ? entry.metadata : JSON.stringify(entry[column])}`;
    }
    yield `${line}}\n`;
  }
}

async function* csvLines(entries: AsyncIterable<ExportedEntryRow>): AsyncGenerator<string> {
  yield `${CSV_COLUMNS.join(',')}\r\n`;
  for await (const entry of entries) {
    yield `${CSV_COLUMNS.map((column) => csvCell(entry[column])).join(',')}\r\n`;
  }
}

/** Lines gathered into chunks of about 64 KiB: one write to the socket each, not one per line. */
async function* chunked(lines: AsyncIterable<string>): AsyncGenerator<string> {
  let chunk = '';
  for await (const line of lines) {
    chunk += line;
    if (chunk.length >= 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** A cell a spreadsheet would read as a formula, run as such when opened: `=`, `+`, `-`, `@`, tab, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One RFC 4180 field. A text value a spreadsheet would take for a formula gets a leading `'`,
 * which spreadsheets read as "text" (OWASP's CSV injection advice); quoting alone does not stop it.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}
