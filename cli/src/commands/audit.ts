import type { AuditEntry } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { formatTime, printTable } from '../output.ts';
import { listOutput } from './lists.ts';

const USAGE =
  'valise audit [--action ACTION] [--resource-type TYPE] [--actor-id ID] [--since TIME] [--until TIME] [--limit N] [--all]';

export async function audit(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      action: { type: 'string' },
      'resource-type': { type: 'string' },
      'actor-id': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const request = ctx.client().audit.list({
    ...(values.action ? { action: values.action } : {}),
    ...(values['resource-type'] ? { resource_type: values['resource-type'] } : {}),
    ...(values['actor-id'] ? { actor_id: values['actor-id'] } : {}),
    ...(values.since ? { since: values.since } : {}),
    ...(values.until ? { until: values.until } : {}),
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
