import { REQUEST_ENUMS, type Transfer, type TransferListItem, type TransferStatus } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { formatBytes, formatTime, printFields, printJson, printLine, printTable } from '../output.ts';
import { listOutput } from './lists.ts';

const STATUSES: readonly TransferStatus[] = REQUEST_ENUMS['GET /v1/transfers'].status;
const LS_USAGE = `valise ls [--status ${STATUSES.join('|')}] [--search TEXT] [--limit N] [--all]`;

export async function ls(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { status: { type: 'string' }, search: { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean' } },
    LS_USAGE,
  );
  expectPositionals(positionals, [], LS_USAGE);
  const status = values.status as TransferStatus | undefined;
  if (status && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}.`);
  const request = ctx.client().transfers.list({
    ...(status ? { status } : {}),
    ...(values.search ? { search: values.search } : {}),
    limit: positiveInteger(values.limit, '--limit'),
  });
  await listOutput(ctx, request, values.all ?? false, (rows: TransferListItem[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (t) => t.id },
        { header: 'CODE', value: (t) => t.short_code },
        { header: 'TITLE', value: (t) => t.transfer_title, maxWidth: 30 },
        { header: 'STATUS', value: (t) => statusText(t) },
        { header: 'FILES', value: (t) => t.files.length },
        { header: 'DOWNLOADS', value: (t) => `${t.total_downloads}${t.max_downloads ? `/${t.max_downloads}` : ''}` },
        { header: 'EXPIRES', value: (t) => formatTime(t.expires_at) },
      ],
      'No transfers.',
    ),
  );
}

function statusText(t: { status: string; status_reason: string | null; approval_status: string | null }): string {
  const reason = t.status_reason && t.status_reason !== t.status ? ` (${t.status_reason})` : '';
  const approval = t.approval_status ? ` [${t.approval_status}]` : '';
  return `${t.status}${reason}${approval}`;
}

const SHOW_USAGE = 'valise show TRANSFER_ID';

export async function show(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, SHOW_USAGE);
  const [id = ''] = expectPositionals(positionals, ['TRANSFER_ID'], SHOW_USAGE);
  const transfer = await ctx.client().transfers.get(id);
  if (ctx.json) return printJson(transfer);
  printTransfer(transfer);
}

function printTransfer(t: Transfer): void {
  printFields([
    ['id', t.id],
    ['title', t.transfer_title],
    ['status', statusText(t)],
    ['encryption', t.encryption_mode],
    ['scan', t.scan_status],
    ['link', t.share_url],
    ['recipient', t.recipient],
    ['downloads', `${t.total_downloads}${t.max_downloads ? ` of ${t.max_downloads}` : ''}`],
    ['password', t.password_protected ? 'yes' : 'no'],
    ['countries', t.allowed_countries ? t.allowed_countries.join(' ') : 'any'],
    ['expires', formatTime(t.expires_at)],
    ['created', formatTime(t.created_at)],
    ...(t.approval_required
      ? ([['approval', `${t.approval_status ?? '-'} ${t.approval_note ?? ''}`.trim()]] as Array<[string, unknown]>)
      : []),
  ]);
  printLine();
  printTable(t.files, [
    { header: 'FILE', value: (f) => f.name, maxWidth: 40 },
    { header: 'SIZE', value: (f) => formatBytes(f.size) },
    { header: 'UPLOAD', value: (f) => f.upload_state },
    { header: 'SCAN', value: (f) => f.scan_status },
  ]);
}

const RM_USAGE = 'valise rm TRANSFER_ID';

/** Revokes the transfer: its keys are destroyed at once, its link stops working. */
export async function rm(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, RM_USAGE);
  const [id = ''] = expectPositionals(positionals, ['TRANSFER_ID'], RM_USAGE);
  const transfer = await ctx.client().transfers.revoke(id);
  if (ctx.json) return printJson(transfer);
  printLine(`Revoked transfer ${transfer.id} (${transfer.short_code}).`);
}

const APPROVE_USAGE = 'valise approve TRANSFER_ID [--reject] [--note TEXT]';

export async function approve(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { reject: { type: 'boolean' }, note: { type: 'string' } },
    APPROVE_USAGE,
  );
  const [id = ''] = expectPositionals(positionals, ['TRANSFER_ID'], APPROVE_USAGE);
  const decision = values.reject ? 'rejected' : 'approved';
  const transfer = await ctx
    .client()
    .transfers.approve(id, { decision, ...(values.note ? { note: values.note } : {}) });
  if (ctx.json) return printJson(transfer);
  printLine(`${decision === 'approved' ? 'Approved' : 'Rejected'} transfer ${transfer.id}.`);
}
