import { resolve } from 'node:path';
import type { Coffre, CoffreAccessEntry, CoffreItem, CoffreMember } from '../../../sdk/src/index.ts';
import { toDirectory } from '../../../sdk/src/node.ts';
import { durationHours, expectPositionals, parseCommand, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, UsageError } from '../exit-codes.ts';
import { formatBytes, formatTime, note, printFields, printJson, printLine, printTable } from '../output.ts';
import { saveArchive } from './archive.ts';
import { listArguments, listOutput } from './lists.ts';

const USAGE = `valise coffre create --name TEXT [--description TEXT] [--expires 30d]
       valise coffre ls [--limit N] [--all]
       valise coffre show COFFRE_ID
       valise coffre rm COFFRE_ID
       valise coffre invite COFFRE_ID EMAIL --access view|download|upload [--name TEXT] [--link-valid 7d]
       valise coffre members COFFRE_ID [--limit N] [--all]
       valise coffre revoke COFFRE_ID MEMBER_ID
       valise coffre put COFFRE_ID FILE…
       valise coffre items COFFRE_ID [--limit N] [--all]
       valise coffre get COFFRE_ID ITEM_ID [-o DIR] [--force]
       valise coffre zip COFFRE_ID [ITEM_ID…] [-o FILE.zip|DIR] [--force]
       valise coffre log COFFRE_ID [--limit N] [--all]`;

const ACCESS = ['view', 'download', 'upload'] as const;

/** Vaults from the terminal (docs/coffres.md): rooms of files, members invited by mail. */
export function coffre(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand(
    'coffre',
    {
      create,
      ls: list,
      list,
      show,
      rm: destroy,
      delete: destroy,
      invite,
      members,
      revoke,
      put,
      items,
      get,
      zip,
      log,
    },
    USAGE,
    argv,
    ctx,
  );
}

async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { name: { type: 'string' }, description: { type: 'string' }, expires: { type: 'string' } },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  if (!values.name) throw new UsageError('--name is required.', `Usage: ${USAGE}`);
  const expires = durationHours(values.expires, '--expires');
  const created = await ctx.client().coffres.create({
    name: values.name,
    ...(values.description ? { description: values.description } : {}),
    ...(expires !== undefined ? { expires_at: new Date(Date.now() + expires * 3_600_000).toISOString() } : {}),
  });
  printCoffre(ctx, created);
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { limit, all } = listArguments(argv, [], USAGE);
  const request = ctx.client().coffres.list({ limit });
  await listOutput(ctx, request, all, (rows: Coffre[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (c) => c.id },
        { header: 'NAME', value: (c) => c.name, maxWidth: 40 },
        { header: 'STATUS', value: (c) => c.status },
        { header: 'MEMBERS', value: (c) => c.member_count },
        { header: 'ITEMS', value: (c) => c.item_count },
        { header: 'EXPIRES', value: (c) => formatTime(c.expires_at) },
      ],
      'No vaults.',
    ),
  );
}

async function show(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['COFFRE_ID'], USAGE);
  printCoffre(ctx, await ctx.client().coffres.get(id));
}

async function destroy(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['COFFRE_ID'], USAGE);
  const deleted = await ctx.client().coffres.delete(id);
  if (ctx.json) return printJson(deleted);
  printLine(`Deleted vault ${deleted.id}: ${deleted.items_destroyed} items destroyed, every invitation revoked.`);
}

async function invite(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { access: { type: 'string' }, name: { type: 'string' }, 'link-valid': { type: 'string' } },
    USAGE,
  );
  const [id = '', email = ''] = expectPositionals(positionals, ['COFFRE_ID', 'EMAIL'], USAGE);
  const access = ACCESS.find((level) => level === values.access);
  if (!access) throw new UsageError(`--access is one of ${ACCESS.join(', ')}.`, `Usage: ${USAGE}`);
  const valid = durationHours(values['link-valid'], '--link-valid');
  const member = await ctx.client().coffres.inviteMember(id, {
    email,
    access,
    ...(values.name ? { name: values.name } : {}),
    ...(valid !== undefined ? { expires_in_days: valid / 24 } : {}),
  });
  if (ctx.json) return printJson(member);
  note(`Invited ${member.email} (${member.access}); the link was mailed to them. It is also here, once:`);
  printLine(member.invitation_url ?? '');
}

async function members(argv: string[], ctx: Context): Promise<void> {
  const { positionals, limit, all } = listArguments(argv, ['COFFRE_ID'], USAGE);
  const [id = ''] = positionals;
  const request = ctx.client().coffres.listMembers(id, { limit });
  await listOutput(ctx, request, all, (rows: CoffreMember[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (m) => m.id },
        { header: 'EMAIL', value: (m) => m.email, maxWidth: 40 },
        { header: 'ACCESS', value: (m) => m.access },
        { header: 'STATUS', value: (m) => m.status },
        { header: 'LINK UNTIL', value: (m) => formatTime(m.invitation_expires_at) },
      ],
      'No members.',
    ),
  );
}

async function revoke(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = '', memberId = ''] = expectPositionals(positionals, ['COFFRE_ID', 'MEMBER_ID'], USAGE);
  const revoked = await ctx.client().coffres.revokeMember(id, memberId);
  if (ctx.json) return printJson(revoked);
  printLine(`Revoked ${revoked.email}: their link no longer works.`);
}

async function put(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id, ...files] = positionals;
  if (!id || files.length === 0) throw new UsageError('Give a vault and at least one file.', `Usage: ${USAGE}`);
  const client = ctx.client();
  const added = [];
  for (const file of files) added.push((await client.coffres.put(id, { file })).item);
  if (ctx.json) return printJson({ object: 'list', data: added });
  note(`Added ${added.length} ${added.length === 1 ? 'item' : 'items'}; each is available once scanned:`);
  for (const item of added) printLine(`${item.id}  ${item.name}`);
}

async function items(argv: string[], ctx: Context): Promise<void> {
  const { positionals, limit, all } = listArguments(argv, ['COFFRE_ID'], USAGE);
  const [id = ''] = positionals;
  const request = ctx.client().coffres.listItems(id, { limit });
  await listOutput(ctx, request, all, (rows: CoffreItem[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (i) => i.id },
        { header: 'NAME', value: (i) => i.name, maxWidth: 40 },
        { header: 'SIZE', value: (i) => formatBytes(i.size) },
        { header: 'STATUS', value: (i) => i.status },
        { header: 'ADDED BY', value: (i) => i.uploaded_by.member_id ?? 'api key' },
        { header: 'CREATED', value: (i) => formatTime(i.created_at) },
      ],
      'No items.',
    ),
  );
}

/** Downloads one item, decrypted by the server, into DIR. */
async function get(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
    USAGE,
  );
  const [id = '', itemId = ''] = expectPositionals(positionals, ['COFFRE_ID', 'ITEM_ID'], USAGE);
  const client = ctx.client();
  const item = await client.coffres.getItem(id, itemId);
  if (!item.download_url) throw new CliError(`Item ${itemId} is ${item.status}: it cannot be downloaded now.`);
  const directory = resolve(values.output ?? '.');
  const sink = toDirectory(directory, { overwrite: values.force ?? false });
  const named = { id: item.id, name: item.name };
  await sink.check([named]);
  const response = await client.coffres.openDownload(item.download_url);
  if (!response.body) throw new CliError('The download had no body.');
  await response.body.pipeTo(await sink(named));
  const path = sink.paths.get(item.id) ?? directory;
  if (ctx.json) return printJson({ object: 'coffre_download', item: item.id, path, size: item.size });
  printLine(path);
}

/** The chosen items (all available ones when none is named) as one ZIP, built by the server. */
async function zip(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
    USAGE,
  );
  const [id, ...itemIds] = positionals;
  if (!id) throw new UsageError('COFFRE_ID is required.', `Usage: ${USAGE}`);
  const response = await ctx.client().coffres.archive(id, itemIds.length > 0 ? { itemIds } : {});
  await saveArchive(ctx, response, { id, output: values.output, force: values.force });
}

async function log(argv: string[], ctx: Context): Promise<void> {
  const { positionals, limit, all } = listArguments(argv, ['COFFRE_ID'], USAGE);
  const [id = ''] = positionals;
  const request = ctx.client().coffres.accessLog(id, { limit });
  await listOutput(ctx, request, all, (rows: CoffreAccessEntry[]) =>
    printTable(
      rows,
      [
        { header: 'WHEN', value: (e) => formatTime(e.created_at) },
        { header: 'WHO', value: (e) => e.actor, maxWidth: 64 },
        { header: 'ACTION', value: (e) => e.action },
        { header: 'ITEM', value: (e) => e.item_name, maxWidth: 30 },
        { header: 'IP', value: (e) => e.ip_address },
      ],
      'Nothing logged yet.',
    ),
  );
}

function printCoffre(ctx: Context, c: Coffre): void {
  if (ctx.json) {
    printJson(c);
    return;
  }
  printFields([
    ['id', c.id],
    ['name', c.name],
    ['description', c.description],
    ['status', c.status],
    ['members', c.member_count],
    ['items', c.item_count],
    ['expires', formatTime(c.expires_at)],
    ['created', formatTime(c.created_at)],
  ]);
}
