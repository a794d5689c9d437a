import type { ListEnvelope, PageRequest } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { note, printJson } from '../output.ts';

/**
 * Prints a list: `--json` gives the API's list envelope (the first page, or with `--all` every
 * page's items in one envelope with `has_more: false`); otherwise `render` draws a table.
 */
export async function listOutput<T>(
  ctx: Context,
  request: PageRequest<T>,
  all: boolean,
  render: (rows: T[]) => void,
): Promise<void> {
  const first = await request;
  let data = first.data;
  let envelope: ListEnvelope<T> = first.envelope;
  if (all) {
    data = await request.toArray();
    envelope = { ...first.envelope, data, has_more: false, next_cursor: null };
  }
  if (ctx.json) return printJson(envelope);
  render(data);
  if (!all && first.hasMore) note('More results: use --all, or a larger --limit.');
}

/** A list command's arguments: its positionals (`names`, in order), `--limit N` and `--all`. */
export function listArguments(argv: string[], names: string[], usage: string) {
  const { values, positionals } = parseCommand(argv, { limit: { type: 'string' }, all: { type: 'boolean' } }, usage);
  return {
    positionals: expectPositionals(positionals, names, usage),
    limit: positiveInteger(values.limit, '--limit'),
    all: values.all ?? false,
  };
}
