import type { Collection, CollectionSummary, CreateCollectionParams } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { formatTime, note, printFields, printJson, printLine, printTable } from '../output.ts';
import { listArguments, listOutput } from './lists.ts';

const USAGE = `valise collections create --title TEXT [--description TEXT] [TRANSFER_ID…]
       valise collections ls [--limit N] [--all]
       valise collections show COLLECTION_ID
       valise collections rename COLLECTION_ID [--title TEXT] [--description TEXT]
       valise collections add COLLECTION_ID TRANSFER_ID… [--position N]
       valise collections remove COLLECTION_ID TRANSFER_ID
       valise collections rotate-link COLLECTION_ID
       valise collections disable-link COLLECTION_ID
       valise collections rm COLLECTION_ID`;

export function collections(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand(
    'collections',
    {
      create,
      ls: list,
      list,
      show,
      rename,
      add,
      remove,
      'rotate-link': rotateLink,
      'disable-link': disableLink,
      rm: destroy,
      delete: destroy,
    },
    USAGE,
    argv,
    ctx,
  );
}

async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { title: { type: 'string' }, description: { type: 'string' } },
    USAGE,
  );
  if (!values.title) throw new UsageError('--title is required.', `Usage: ${USAGE}`);
  const params: CreateCollectionParams = {
    title: values.title,
    ...(values.description ? { description: values.description } : {}),
    ...(positionals.length ? { transfer_ids: positionals } : {}),
  };
  printCollection(ctx, await ctx.client().collections.create(params));
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { limit, all } = listArguments(argv, [], USAGE);
  const request = ctx.client().collections.list({ limit });
  await listOutput(ctx, request, all, (rows: CollectionSummary[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (c) => c.id },
        { header: 'TITLE', value: (c) => c.title, maxWidth: 40 },
        { header: 'TRANSFERS', value: (c) => c.transfer_count },
        { header: 'LINK', value: (c) => c.share_url ?? 'off', maxWidth: 50 },
        { header: 'CREATED', value: (c) => formatTime(c.created_at) },
      ],
      'No collections.',
    ),
  );
}

async function show(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['COLLECTION_ID'], USAGE);
  printCollection(ctx, await ctx.client().collections.get(id));
}

async function rename(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { title: { type: 'string' }, description: { type: 'string' } },
    USAGE,
  );
  const [id = ''] = expectPositionals(positionals, ['COLLECTION_ID'], USAGE);
  if (values.title === undefined && values.description === undefined) {
    throw new UsageError('Give --title, --description or both.', `Usage: ${USAGE}`);
  }
  const params = {
    ...(values.title !== undefined ? { title: values.title } : {}),
    ...(values.description !== undefined ? { description: values.description } : {}),
  };
  printCollection(ctx, await ctx.client().collections.update(id, params));
}

async function add(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(argv, { position: { type: 'string' } }, USAGE);
  const [id, ...transferIds] = positionals;
  if (!id || transferIds.length === 0)
    throw new UsageError('Give a collection and at least one transfer.', `Usage: ${USAGE}`);
  const position = values.position === undefined ? undefined : Number(values.position);
  if (position !== undefined && !(Number.isInteger(position) && position >= 0)) {
    throw new UsageError(`--position wants a whole number from 0, got ${values.position}.`);
  }
  printCollection(
    ctx,
    await ctx.client().collections.addTransfers(id, {
      transfer_ids: transferIds,
      ...(position !== undefined ? { position } : {}),
    }),
  );
}

async function remove(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = '', transferId = ''] = expectPositionals(positionals, ['COLLECTION_ID', 'TRANSFER_ID'], USAGE);
  printCollection(ctx, await ctx.client().collections.removeTransfer(id, transferId));
}

async function rotateLink(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['COLLECTION_ID'], USAGE);
  const rotated = await ctx.client().collections.rotateShareLink(id);
  if (ctx.json) return printJson(rotated);
  note('New share link; the old one no longer works:');
  printLine(rotated.share_url ?? '');
}

async function disableLink(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['COLLECTION_ID'], USAGE);
  const disabled = await ctx.client().collections.disableShareLink(id);
  if (ctx.json) return printJson(disabled);
  printLine(`The share link of ${disabled.id} is off. \`valise collections rotate-link\` makes a new one.`);
}

async function destroy(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['COLLECTION_ID'], USAGE);
  const deleted = await ctx.client().collections.delete(id);
  if (ctx.json) return printJson(deleted);
  printLine(`Deleted collection ${deleted.id}; its transfers are untouched.`);
}

function printCollection(ctx: Context, c: Collection): void {
  if (ctx.json) {
    printJson(c);
    return;
  }
  printFields([
    ['id', c.id],
    ['title', c.title],
    ['description', c.description],
    ['share_url', c.share_url ?? 'off'],
    ['transfers', c.transfer_count],
    ['updated', formatTime(c.updated_at)],
  ]);
  if (c.transfers.length === 0) return;
  printLine();
  printTable(c.transfers, [
    { header: '#', value: (t) => t.position },
    { header: 'TRANSFER', value: (t) => t.id },
    { header: 'TITLE', value: (t) => t.transfer_title, maxWidth: 30 },
    { header: 'STATUS', value: (t) => t.status },
    { header: 'EXPIRES', value: (t) => formatTime(t.expires_at) },
  ]);
}
