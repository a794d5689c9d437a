import { createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { AuditEntry } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, EXIT_API, EXIT_EXISTS, UsageError } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';
import { listOutput } from './lists.ts';

const FILTERS = '[--action ACTION] [--resource-type TYPE] [--actor-id ID] [--since TIME] [--until TIME]';
const USAGE = `valise audit ${FILTERS} [--limit N] [--all]
       valise audit export [--format ndjson|csv] ${FILTERS} [--output FILE [--force]]
       valise audit verify`;

const FILTER_OPTIONS = {
  action: { type: 'string' },
  'resource-type': { type: 'string' },
  'actor-id': { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
} as const;

export async function audit(argv: string[], ctx: Context): Promise<void> {
  if (argv[0] === 'export') return exportLog(argv.slice(1), ctx);
  if (argv[0] === 'verify') return verify(argv.slice(1), ctx);
  return list(argv, ctx);
}

function filtersOf(values: Partial<Record<keyof typeof FILTER_OPTIONS, string>>) {
  return {
    ...(values.action ? { action: values.action } : {}),
    ...(values['resource-type'] ? { resource_type: values['resource-type'] } : {}),
    ...(values['actor-id'] ? { actor_id: values['actor-id'] } : {}),
    ...(values.since ? { since: values.since } : {}),
    ...(values.until ? { until: values.until } : {}),
  };
}

/** The log as a file (scope `audit:export`), streamed to stdout or to `--output`. */
async function exportLog(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      ...FILTER_OPTIONS,
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
      force: { type: 'boolean' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const format = values.format ?? 'ndjson';
  if (format !== 'ndjson' && format !== 'csv') throw new UsageError('--format is ndjson or csv.');
  if (values.force && !values.output) throw new UsageError('--force applies to --output only.');
  const response = await ctx.client().audit.download({ ...filtersOf(values), format });
  if (!response.body) throw new CliError('The export had no body.', { exitCode: EXIT_API });
  let sink: Writable = process.stdout;
  if (values.output) {
    sink = createWriteStream(values.output, { flags: values.force ? 'w' : 'wx' });
    await new Promise<void>((resolve, reject) => {
      sink.once('open', () => resolve());
      sink.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EEXIST'
            ? new CliError(`${values.output} exists already.`, {
                exitCode: EXIT_EXISTS,
                hint: 'Add --force to replace it.',
              })
            : error,
        ),
      );
    });
  }
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream), sink, {
    end: sink !== process.stdout,
  });
  if (values.output) note(`Audit log exported to ${values.output}.`);
}

/** Verifies the calling environment's hash chain; exit code 2 when it is broken. */
async function verify(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  expectPositionals(positionals, [], USAGE);
  const result = await ctx.client().audit.verify();
  if (ctx.json) printJson(result);
  else if (result.first_broken) {
    const { id, seq, reason, detail } = result.first_broken;
    printLine(`Broken at seq ${seq} (entry ${id}): ${reason}. ${detail}`);
  } else {
    printLine(
      `Valid: ${result.entries_checked} entries from anchor seq ${result.anchor.seq}${result.head ? ` to seq ${result.head.seq}` : ''}.`,
    );
  }
  if (!result.valid) throw new CliError('The audit log does not verify.', { exitCode: EXIT_API });
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      ...FILTER_OPTIONS,
      limit: { type: 'string' },
      all: { type: 'boolean' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const request = ctx.client().audit.list({
    ...filtersOf(values),
    limit: positiveInteger(values.limit, '--limit'),
  });
  await listOutput(ctx, request, values.all ?? false, (rows: AuditEntry[]) =>
    printTable(
      rows,
      [
        { header: 'WHEN', value: (e) => formatTime(e.created_at) },
        { header: 'ACTION', value: (e) => e.action },
        { header: 'STATUS', value: (e) => e.status },
        {
          header: 'RESOURCE',
          value: (e) => (e.resource_type ? `${e.resource_type} ${e.resource_id ?? ''}`.trim() : null),
        },
        { header: 'IP', value: (e) => e.ip_address },
      ],
      'No audit entries.',
    ),
  );
}
