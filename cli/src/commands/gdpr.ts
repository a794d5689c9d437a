import { writeFile } from 'node:fs/promises';
import type { LegalAcceptanceEntry, LegalDocumentSummary } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, EXIT_API } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';

const GDPR_USAGE = `valise gdpr export [--user USER_ID] [--output FILE]
       valise gdpr acceptances`;

const LEGAL_USAGE = `valise legal documents
       valise legal accept SLUG [--version V]`;

export function gdpr(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('gdpr', { export: exportData, acceptances }, GDPR_USAGE, argv, ctx);
}

export function legal(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('legal', { documents, ls: documents, accept }, LEGAL_USAGE, argv, ctx);
}

/** Asks for an export, waits for it, and writes its JSON to --output (or stdout). */
async function exportData(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { user: { type: 'string' }, output: { type: 'string', short: 'o' } },
    GDPR_USAGE,
  );
  expectPositionals(positionals, [], GDPR_USAGE);
  const client = ctx.client();
  const requested = await client.gdpr.createExport(values.user ? { user_id: values.user } : {});
  note(`Export ${requested.id} requested; collecting…`);
  const done = await client.gdpr.waitForExport(requested.id);
  if (done.status !== 'completed') {
    throw new CliError(`Export ${done.id} ended ${done.status}${done.error ? `: ${done.error}` : ''}.`, {
      exitCode: EXIT_API,
    });
  }
  const data = await client.gdpr.download(done);
  const text = `${JSON.stringify(data, null, 2)}\n`;
  if (!values.output) return void process.stdout.write(text);
  await writeFile(values.output, text, { mode: 0o600 });
  if (ctx.json) return printJson(done);
  note(`Wrote ${values.output} (${done.size} bytes); the export is kept until ${formatTime(done.expires_at)}.`);
}

async function acceptances(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, GDPR_USAGE);
  expectPositionals(positionals, [], GDPR_USAGE);
  const list = await ctx.client().gdpr.acceptances();
  if (ctx.json) return printJson(list);
  printTable(
    list.data,
    [
      { header: 'DOCUMENT', value: (entry: LegalAcceptanceEntry) => entry.slug },
      { header: 'CURRENT', value: (entry) => entry.current_version },
      { header: 'ACCEPTED', value: (entry) => entry.accepted_version ?? '-' },
      { header: 'WHEN', value: (entry) => formatTime(entry.accepted_at) },
      { header: 'UP TO DATE', value: (entry) => (entry.up_to_date ? 'yes' : 'no') },
    ],
    'No published documents.',
  );
  const { summary } = list;
  note(
    `${summary.accepted_up_to_date} of ${summary.total_documents} up to date, ${summary.acceptance_outdated} outdated, ` +
      `${summary.never_accepted} never accepted.`,
  );
}

async function documents(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, LEGAL_USAGE);
  expectPositionals(positionals, [], LEGAL_USAGE);
  const page = await ctx.client().legal.documents();
  if (ctx.json) return printJson(page);
  printTable(
    page.data,
    [
      { header: 'SLUG', value: (document: LegalDocumentSummary) => document.slug },
      { header: 'TITLE', value: (document) => document.title, maxWidth: 50 },
      { header: 'VERSION', value: (document) => document.version },
      { header: 'IN EFFECT', value: (document) => document.effective_date },
    ],
    'No published documents.',
  );
}

async function accept(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(argv, { version: { type: 'string' } }, LEGAL_USAGE);
  const [slug = ''] = expectPositionals(positionals, ['SLUG'], LEGAL_USAGE);
  const accepted = await ctx.client().legal.accept(slug, values.version);
  if (ctx.json) return printJson(accepted);
  printLine(`Accepted ${accepted.slug} version ${accepted.version}.`);
}
