import { expectPositionals, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { printFields, printJson, printLine, printTable } from '../output.ts';

const WINDOW = '[--since TIME] [--until TIME] [--tz ZONE]';
const USAGE = `valise analytics [summary] ${WINDOW}
       valise analytics geo|funnel|heatmap ${WINDOW}
       valise analytics top-transfers|top-recipients ${WINDOW} [--limit N]`;

const OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  tz: { type: 'string' },
  limit: { type: 'string' },
} as const;

const VIEWS = ['summary', 'geo', 'funnel', 'heatmap', 'top-transfers', 'top-recipients'] as const;
type View = (typeof VIEWS)[number];

const percent = (ratio: number | null) => (ratio === null ? '-' : `${(ratio * 100).toFixed(1)}%`);
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function duration(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** `valise analytics [view]`: the calling environment's numbers as tables, or the API's JSON. */
export async function analytics(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(argv, OPTIONS, USAGE);
  const [name = 'summary', ...extra] = positionals;
  expectPositionals(extra, [], USAGE);
  if (!(VIEWS as readonly string[]).includes(name)) throw new UsageError(`Unknown view ${name}.\n${USAGE}`);
  const view = name as View;
  const window = {
    ...(values.since ? { since: values.since } : {}),
    ...(values.until ? { until: values.until } : {}),
    ...(values.tz ? { tz: values.tz } : {}),
  };
  if (values.limit && !view.startsWith('top-')) throw new UsageError('--limit applies to the top lists only.');
  const client = ctx.client().analytics;

  switch (view) {
    case 'summary': {
      const s = await client.summary(window);
      if (ctx.json) return printJson(s);
      printFields([
        ['Window', `${s.since} to ${s.until} (${s.tz})`],
        ['Transfers created', s.transfers_created],
        ['Bytes sent', s.bytes_sent],
        ['Downloads', s.downloads],
        ['Unique recipients', s.unique_recipients],
        ['Completion rate', percent(s.completion_rate)],
        ['Median to first download', duration(s.median_seconds_to_first_download)],
      ]);
      printLine();
      return printTable(s.days, [
        { header: 'DAY', value: (d) => d.date },
        { header: 'CREATED', value: (d) => d.transfers_created },
        { header: 'BYTES', value: (d) => d.bytes_sent },
        { header: 'DOWNLOADS', value: (d) => d.downloads },
      ]);
    }
    case 'geo': {
      const g = await client.geo(window);
      if (ctx.json) return printJson(g);
      return printTable(
        g.countries,
        [
          { header: 'COUNTRY', value: (c) => c.country_code ?? 'unknown' },
          { header: 'DOWNLOADS', value: (c) => c.downloads },
          { header: 'VISITORS', value: (c) => c.visitors },
        ],
        'No downloads in this window.',
      );
    }
    case 'funnel': {
      const f = await client.funnel(window);
      if (ctx.json) return printJson(f);
      return printTable(f.steps, [
        { header: 'STEP', value: (s) => s.step },
        { header: 'TRANSFERS', value: (s) => s.count },
        { header: 'FROM PREVIOUS', value: (s) => percent(s.conversion) },
        { header: 'OF CREATED', value: (s) => percent(s.overall) },
      ]);
    }
    case 'heatmap': {
      const h = await client.heatmap(window);
      if (ctx.json) return printJson(h);
      const grid = WEEKDAYS.map((day) => ({ day, hours: new Array<number>(24).fill(0) }));
      for (const cell of h.cells) {
        const row = grid[cell.weekday - 1];
        if (row) row.hours[cell.hour] = cell.downloads;
      }
      printLine(`Downloads by weekday and hour (${h.tz})`);
      return printTable(grid, [
        { header: 'DAY', value: (r) => r.day },
        ...Array.from({ length: 24 }, (_, hour) => ({
          header: String(hour).padStart(2, '0'),
          value: (r: { hours: number[] }) => r.hours[hour] || '.',
        })),
      ]);
    }
    case 'top-transfers': {
      const top = await client.topTransfers({ ...window, limit: positiveInteger(values.limit, '--limit') });
      if (ctx.json) return printJson(top);
      return printTable(
        top.transfers,
        [
          { header: 'ID', value: (r) => r.id },
          { header: 'CODE', value: (r) => r.short_code },
          { header: 'TITLE', value: (r) => r.transfer_title, maxWidth: 40 },
          { header: 'DOWNLOADS', value: (r) => r.downloads },
        ],
        'No downloads in this window.',
      );
    }
    case 'top-recipients': {
      const top = await client.topRecipients({ ...window, limit: positiveInteger(values.limit, '--limit') });
      if (ctx.json) return printJson(top);
      return printTable(
        top.recipients,
        [
          { header: 'RECIPIENT', value: (r) => r.email },
          { header: 'TRANSFERS', value: (r) => r.transfers },
          { header: 'DOWNLOADS', value: (r) => r.downloads },
        ],
        'No recipients in this window.',
      );
    }
  }
}
