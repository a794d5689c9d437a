import type { CreateWebhookParams, Webhook, WebhookDelivery, WebhookDeliveryAttempt } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, EXIT_API, UsageError } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';
import { visible } from '../terminal.ts';
import { listArguments, listOutput } from './lists.ts';

const USAGE = `valise webhooks create --url URL [--event TYPE…] [--name NAME] [--description TEXT]
       valise webhooks ls [--limit N] [--all]
       valise webhooks test WEBHOOK_ID
       valise webhooks deliveries WEBHOOK_ID [--event-id ID] [--limit N] [--all]
       valise webhooks retry WEBHOOK_ID DELIVERY_ID
       valise webhooks rotate-secret WEBHOOK_ID`;

export function webhooks(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand(
    'webhooks',
    { create, ls: list, list, test: ping, deliveries, retry, 'rotate-secret': rotateSecret },
    USAGE,
    argv,
    ctx,
  );
}

async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      url: { type: 'string' },
      event: { type: 'string', multiple: true },
      name: { type: 'string' },
      description: { type: 'string' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  if (!values.url) throw new UsageError('--url is required.', `Usage: ${USAGE}`);
  const params = {
    url: values.url,
    ...(values.event ? { events: values.event } : {}),
    ...(values.name ? { name: values.name } : {}),
    ...(values.description ? { description: values.description } : {}),
  } as CreateWebhookParams;
  const created = await ctx.client().webhooks.create(params);
  if (ctx.json) return printJson(created);
  note(`Created webhook ${created.id} for ${created.events.join(', ')}. Its signing secret, shown this once:`);
  printLine(created.secret);
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { limit, all } = listArguments(argv, [], USAGE);
  const request = ctx.client().webhooks.list({ limit });
  await listOutput(ctx, request, all, (rows: Webhook[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (w) => w.id },
        { header: 'URL', value: (w) => w.url, maxWidth: 50 },
        { header: 'EVENTS', value: (w) => w.events, maxWidth: 40 },
        {
          header: 'STATE',
          value: (w) => (w.is_active ? 'active' : `disabled${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`),
        },
        { header: 'OK/FAILED', value: (w) => `${w.success_count}/${w.failure_count}` },
        { header: 'LAST', value: (w) => formatTime(w.last_triggered_at) },
      ],
      'No webhooks.',
    ),
  );
}

/** Sends a signed `ping` now. A receiver that failed is exit 2: the check did not pass. */
async function ping(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['WEBHOOK_ID'], USAGE);
  reportAttempt(ctx, await ctx.client().webhooks.test(id), 'ping');
}

/** Sends a recorded delivery again now, outside its retry schedule (after fixing a receiver, say). */
async function retry(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = '', deliveryId = ''] = expectPositionals(positionals, ['WEBHOOK_ID', 'DELIVERY_ID'], USAGE);
  reportAttempt(ctx, await ctx.client().webhooks.retryDelivery(id, deliveryId), 'delivery');
}

async function rotateSecret(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['WEBHOOK_ID'], USAGE);
  const rotated = await ctx.client().webhooks.rotateSecret(id);
  if (ctx.json) return printJson(rotated);
  note(
    `New secret for ${visible(rotated.url)}; the old one keeps signing too until ${formatTime(rotated.previous_secret_expires_at)}. It is shown only this once:`,
  );
  printLine(rotated.secret);
}

function reportAttempt(ctx: Context, attempt: WebhookDeliveryAttempt, what: 'ping' | 'delivery'): void {
  if (ctx.json) printJson(attempt);
  else
    printLine(
      `${attempt.succeeded ? 'Delivered' : 'Failed'}: ${visible(attempt.url)} answered ${attempt.status_code ?? 'nothing'} in ${attempt.duration_ms} ms.`,
    );
  if (!attempt.succeeded) {
    throw new CliError(`The receiver did not accept the ${what}: ${attempt.error ?? 'no error recorded'}`, {
      exitCode: EXIT_API,
    });
  }
}

async function deliveries(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { 'event-id': { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean' } },
    USAGE,
  );
  const [id = ''] = expectPositionals(positionals, ['WEBHOOK_ID'], USAGE);
  const request = ctx.client().webhooks.deliveries(id, {
    ...(values['event-id'] ? { event_id: values['event-id'] } : {}),
    limit: positiveInteger(values.limit, '--limit'),
  });
  await listOutput(ctx, request, values.all ?? false, (rows: WebhookDelivery[]) =>
    printTable(
      rows,
      [
        { header: 'WHEN', value: (d) => formatTime(d.created_at) },
        { header: 'DELIVERY', value: (d) => d.delivery_id },
        { header: 'EVENT', value: (d) => d.event_type },
        { header: 'TRIGGER', value: (d) => d.trigger },
        { header: 'ATTEMPT', value: (d) => d.attempt },
        { header: 'RESULT', value: (d) => (d.succeeded ? 'ok' : 'failed') },
        { header: 'STATUS', value: (d) => d.status_code },
        { header: 'MS', value: (d) => d.duration_ms },
        { header: 'ERROR', value: (d) => d.error, maxWidth: 40 },
      ],
      'No deliveries yet.',
    ),
  );
}
