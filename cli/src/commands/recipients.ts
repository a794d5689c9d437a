import type {
  CreateRecipientParams,
  Recipient,
  TransferRecipient,
  UpdateRecipientParams,
} from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';
import { listOutput } from './lists.ts';

const USAGE = `valise recipients ls [--search TEXT] [--tag TAG] [--limit N] [--all]
       valise recipients add EMAIL [--name NAME] [--org ORGANISATION] [--tag TAG…]
       valise recipients show RECIPIENT_ID
       valise recipients update RECIPIENT_ID [--email EMAIL] [--name NAME] [--org ORGANISATION] [--tag TAG…]
       valise recipients rm RECIPIENT_ID
       valise recipients of TRANSFER_ID`;

/** The address book, and who a transfer went to with what each downloaded (docs/recipients.md). */
export function recipients(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand(
    'recipients',
    { ls: list, list, add, show, update, rm: remove, of: ofTransfer },
    USAGE,
    argv,
    ctx,
  );
}

const entryFlags = {
  name: { type: 'string' },
  org: { type: 'string' },
  tag: { type: 'string', multiple: true },
} as const;

async function list(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { search: { type: 'string' }, tag: { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean' } },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const request = ctx.client().recipients.list({
    ...(values.search ? { search: values.search } : {}),
    ...(values.tag ? { tag: values.tag } : {}),
    limit: positiveInteger(values.limit, '--limit'),
  });
  await listOutput(ctx, request, values.all ?? false, (rows: Recipient[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'EMAIL', value: (r) => r.email, maxWidth: 40 },
        { header: 'NAME', value: (r) => r.name, maxWidth: 30 },
        { header: 'ORGANISATION', value: (r) => r.organisation, maxWidth: 30 },
        { header: 'TAGS', value: (r) => r.tags, maxWidth: 30 },
        { header: 'SENT', value: (r) => r.stats.transfers_sent },
        { header: 'DOWNLOADED', value: (r) => r.stats.downloads_completed },
      ],
      'No recipients.',
    ),
  );
}

async function add(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(argv, entryFlags, USAGE);
  const [email = ''] = expectPositionals(positionals, ['EMAIL'], USAGE);
  const params: CreateRecipientParams = {
    email,
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values.org !== undefined ? { organisation: values.org } : {}),
    ...(values.tag ? { tags: values.tag } : {}),
  };
  printRecipient(ctx, await ctx.client().recipients.create(params));
}

async function show(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['RECIPIENT_ID'], USAGE);
  printRecipient(ctx, await ctx.client().recipients.get(id));
}

async function update(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(argv, { ...entryFlags, email: { type: 'string' } }, USAGE);
  const [id = ''] = expectPositionals(positionals, ['RECIPIENT_ID'], USAGE);
  const params: UpdateRecipientParams = {
    ...(values.email !== undefined ? { email: values.email } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values.org !== undefined ? { organisation: values.org } : {}),
    ...(values.tag ? { tags: values.tag } : {}),
  };
  if (Object.keys(params).length === 0) throw new UsageError('Nothing to change.', `Usage: ${USAGE}`);
  printRecipient(ctx, await ctx.client().recipients.update(id, params));
}

async function remove(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['RECIPIENT_ID'], USAGE);
  const removed = await ctx.client().recipients.delete(id);
  if (ctx.json) return printJson(removed);
  note(`Deleted recipient ${removed.id}. Links already sent keep working.`);
}

/** Who a transfer went to: each personal link and the downloads completed through it. */
async function ofTransfer(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['TRANSFER_ID'], USAGE);
  await listOutput(ctx, ctx.client().transfers.recipients(id), true, (rows: TransferRecipient[]) =>
    printTable(
      rows,
      [
        { header: 'EMAIL', value: (r) => r.email, maxWidth: 40 },
        { header: 'MAILED', value: (r) => formatTime(r.mailed_at) },
        { header: 'DOWNLOADS', value: (r) => r.downloads_completed },
        { header: 'LAST', value: (r) => formatTime(r.last_downloaded_at) },
        { header: 'LINK', value: (r) => r.share_url },
      ],
      'Sent to no one.',
    ),
  );
}

function printRecipient(ctx: Context, recipient: Recipient): void {
  if (ctx.json) {
    printJson(recipient);
    return;
  }
  const { stats } = recipient;
  for (const [label, value] of [
    ['id', recipient.id],
    ['email', recipient.email],
    ['name', recipient.name ?? ''],
    ['organisation', recipient.organisation ?? ''],
    ['tags', recipient.tags.join(', ')],
    ['transfers sent', String(stats.transfers_sent)],
    ['downloads', String(stats.downloads_completed)],
    ['last sent', formatTime(stats.last_sent_at)],
    ['last download', formatTime(stats.last_downloaded_at)],
  ] as const) {
    printLine(`${label.padEnd(14)} ${value}`);
  }
}
