import type { BillingInvoice, ProcessorEvent } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { formatTime, printJson, printLine, printTable } from '../output.ts';

const USAGE = `valise billing subscription
       valise billing invoices
       valise billing events [--type EVENT_TYPE] [--since TIME] [--limit N] [--raw]`;

export function billing(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('billing', { subscription, invoices, events }, USAGE, argv, ctx);
}

const amount = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;

async function subscription(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  expectPositionals(positionals, [], USAGE);
  const current = await ctx.client().billing.subscription();
  if (ctx.json) return printJson(current);
  printLine(`Plan:          ${current.plan} (${current.status})`);
  printLine(`Period:        ${formatTime(current.current_period_start)} → ${formatTime(current.current_period_end)}`);
  printLine(`Customer:      ${current.customer_id ?? 'not linked'}`);
  printLine(`Subscription:  ${current.subscription_id ?? 'none'}`);
  const { usage } = current;
  printLine(`Usage from ${formatTime(usage.period_start)} to ${formatTime(usage.period_end)} (live only):`);
  printLine(`  bytes stored ${usage.bytes_stored}, bytes sent ${usage.bytes_sent}, transfers ${usage.transfers}`);
}

async function invoices(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  expectPositionals(positionals, [], USAGE);
  const page = await ctx.client().billing.invoices();
  if (ctx.json) return printJson(page);
  printTable(
    page.data,
    [
      { header: 'ID', value: (invoice: BillingInvoice) => invoice.id },
      { header: 'NUMBER', value: (invoice) => invoice.number },
      { header: 'STATUS', value: (invoice) => invoice.status },
      { header: 'DUE', value: (invoice) => amount(invoice.amount_due, invoice.currency) },
      { header: 'PAID', value: (invoice) => amount(invoice.amount_paid, invoice.currency) },
      { header: 'CREATED', value: (invoice) => formatTime(invoice.created_at) },
    ],
    'No invoices.',
  );
}

async function events(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { type: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, raw: { type: 'boolean' } },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const limit = positiveInteger(values.limit, '--limit');
  const page = await ctx.client().billing.processorEvents({
    ...(values.type ? { event_type: values.type } : {}),
    ...(values.since ? { since: values.since } : {}),
    ...(limit === undefined ? {} : { limit }),
    ...(values.raw ? { include_raw: 'true' } : {}),
  });
  if (ctx.json) return printJson(page);
  printTable(
    page.data,
    [
      { header: 'PROCESSED', value: (event: ProcessorEvent) => formatTime(event.processed_at) },
      { header: 'TYPE', value: (event) => event.event_type },
      { header: 'PROCESSOR ID', value: (event) => event.processor_event_id },
      { header: 'CUSTOMER', value: (event) => event.customer_id },
      { header: 'SUBSCRIPTION', value: (event) => event.subscription_id },
    ],
    'No processor events.',
  );
}
