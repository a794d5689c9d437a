import {
  type ApiKey,
  type CreateApiKeyParams,
  REQUEST_ENUMS,
  type RevokeApiKeyParams,
} from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';
import { withMfa } from '../prompt.ts';
import { visible } from '../terminal.ts';
import { listArguments, listOutput } from './lists.ts';

const USAGE = `valise keys create --name NAME [--restricted --scope SCOPE…] [--expires-in-days N] [--allowed-ip IP…] [--max-uses N] [--mfa-code CODE]
       valise keys ls [--limit N] [--all]
       valise keys rotate KEY_ID [--grace-hours N] [--mfa-code CODE]
       valise keys revoke KEY_ID [--reason REASON]`;

export function keys(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('keys', { create, ls: list, list, rotate, revoke }, USAGE, argv, ctx);
}

async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      name: { type: 'string' },
      description: { type: 'string' },
      restricted: { type: 'boolean' },
      scope: { type: 'string', multiple: true },
      'expires-in-days': { type: 'string' },
      'allowed-ip': { type: 'string', multiple: true },
      'max-uses': { type: 'string' },
      'mfa-code': { type: 'string' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  if (!values.name) throw new UsageError('--name is required.', `Usage: ${USAGE}`);
  if (values.scope && !values.restricted) throw new UsageError('--scope applies to --restricted keys only.');
  const days = values['expires-in-days'];
  if (days !== undefined && !(Number(days) > 0)) throw new UsageError('--expires-in-days wants a positive number.');
  const params = {
    name: values.name,
    ...(values.description ? { description: values.description } : {}),
    key_type: values.restricted ? 'restricted' : 'full',
    ...(values.scope ? { scopes: values.scope } : {}),
    ...(days !== undefined ? { expires_in_days: Number(days) } : {}),
    ...(values['allowed-ip'] ? { allowed_ips: values['allowed-ip'] } : {}),
    ...(values['max-uses'] ? { max_uses: positiveInteger(values['max-uses'], '--max-uses') } : {}),
  } as CreateApiKeyParams;
  const valise = ctx.client();
  const created = await withMfa(values['mfa-code'], ctx.json, (mfa_code) =>
    valise.apiKeys.create({ ...params, ...(mfa_code ? { mfa_code } : {}) }),
  );
  if (ctx.json) return printJson(created);
  note(`Created key ${created.id} (${created.key_type}, ${created.environment}). The value is shown this once:`);
  printLine(created.key);
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { limit, all } = listArguments(argv, [], USAGE);
  const request = ctx.client().apiKeys.list({ limit });
  await listOutput(ctx, request, all, (rows: ApiKey[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (k) => k.id },
        { header: 'NAME', value: (k) => k.name, maxWidth: 30 },
        { header: 'PREFIX', value: (k) => k.key_prefix },
        { header: 'TYPE', value: (k) => k.key_type },
        { header: 'STATE', value: (k) => (k.revoked_at ? 'revoked' : k.is_active ? 'active' : 'inactive') },
        { header: 'USES', value: (k) => `${k.used_count}${k.max_uses ? `/${k.max_uses}` : ''}` },
        { header: 'LAST USED', value: (k) => formatTime(k.last_used_at) },
        { header: 'EXPIRES', value: (k) => formatTime(k.expires_at) },
      ],
      'No API keys.',
    ),
  );
}

async function rotate(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { 'grace-hours': { type: 'string' }, 'mfa-code': { type: 'string' } },
    USAGE,
  );
  const [id = ''] = expectPositionals(positionals, ['KEY_ID'], USAGE);
  const grace = values['grace-hours'];
  if (grace !== undefined && !/^\d+$/.test(grace))
    throw new UsageError('--grace-hours wants a whole number of hours (0 to 168).');
  const valise = ctx.client();
  const rotated = await withMfa(values['mfa-code'], ctx.json, (mfa_code) =>
    valise.apiKeys.rotate(id, {
      ...(grace !== undefined ? { grace_period_hours: Number(grace) } : {}),
      ...(mfa_code ? { mfa_code } : {}),
    }),
  );
  if (ctx.json) return printJson(rotated);
  note(
    `Rotated key ${rotated.id}; the old value works until ${formatTime(rotated.previous_key_valid_until)}. New value:`,
  );
  printLine(rotated.key);
}

const REASONS: readonly string[] = REQUEST_ENUMS['DELETE /v1/api-keys/{id}'].reason;

async function revoke(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(argv, { reason: { type: 'string' } }, USAGE);
  const [id = ''] = expectPositionals(positionals, ['KEY_ID'], USAGE);
  if (values.reason && !REASONS.includes(values.reason))
    throw new UsageError(`--reason must be one of ${REASONS.join(', ')}.`);
  const params = (values.reason ? { reason: values.reason } : {}) as RevokeApiKeyParams;
  const revoked = await ctx.client().apiKeys.revoke(id, params);
  if (ctx.json) return printJson(revoked);
  printLine(`Revoked key ${revoked.id} (${visible(revoked.name)}).`);
}
