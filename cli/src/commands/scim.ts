import { REQUEST_ENUMS, type ScimAuditEvent, type ScimToken } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, positiveInteger, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';
import { withMfa } from '../prompt.ts';

const USAGE = `valise scim tokens create [--name NAME] [--mfa-code CODE]
       valise scim tokens ls
       valise scim tokens revoke TOKEN_ID
       valise scim audit [--operation OPERATION] [--limit N]`;

const OPERATIONS: readonly string[] = REQUEST_ENUMS['GET /v1/scim/audit'].operation;

export function scim(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('scim', { tokens, audit }, USAGE, argv, ctx);
}

function tokens(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('scim tokens', { create, ls: list, list, revoke }, USAGE, argv, ctx);
}

/** The token is printed once, for the identity provider's SCIM settings (docs/scim.md). */
async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { name: { type: 'string' }, 'mfa-code': { type: 'string' } },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const valise = ctx.client();
  const created = await withMfa(values['mfa-code'], ctx.json, (mfa_code) =>
    valise.scim.createToken({ ...(values.name ? { name: values.name } : {}), ...(mfa_code ? { mfa_code } : {}) }),
  );
  if (ctx.json) return printJson(created);
  note(`Created SCIM token ${created.id}. Give it to your identity provider; it is shown this once:`);
  printLine(created.token);
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  expectPositionals(positionals, [], USAGE);
  const page = await ctx.client().scim.listTokens();
  if (ctx.json) return printJson(page);
  printTable(
    page.data,
    [
      { header: 'ID', value: (token: ScimToken) => token.id },
      { header: 'NAME', value: (token) => token.name, maxWidth: 30 },
      { header: 'PREFIX', value: (token) => token.token_prefix },
      { header: 'CREATED', value: (token) => formatTime(token.created_at) },
      { header: 'LAST USED', value: (token) => formatTime(token.last_used_at) },
      { header: 'REVOKED', value: (token) => formatTime(token.revoked_at) },
    ],
    'No SCIM tokens.',
  );
}

async function revoke(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['TOKEN_ID'], USAGE);
  const revoked = await ctx.client().scim.revokeToken(id);
  if (ctx.json) return printJson(revoked);
  note(`Revoked SCIM token ${revoked.id}: it no longer opens /v1/scim.`);
}

async function audit(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { operation: { type: 'string' }, limit: { type: 'string' } },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const operation = values.operation;
  if (operation !== undefined && !OPERATIONS.includes(operation)) {
    throw new UsageError(`--operation must be one of ${OPERATIONS.join(', ')}.`, `Usage: ${USAGE}`);
  }
  const limit = positiveInteger(values.limit, '--limit');
  const page = await ctx.client().scim.audit({
    ...(operation ? { operation: operation as ScimAuditEvent['operation'] } : {}),
    ...(limit === undefined ? {} : { limit }),
  });
  if (ctx.json) return printJson(page);
  printTable(
    page.data,
    [
      { header: 'WHEN', value: (event: ScimAuditEvent) => formatTime(event.created_at) },
      { header: 'OPERATION', value: (event) => event.operation },
      { header: 'STATUS', value: (event) => String(event.response_status) },
      { header: 'RESOURCE', value: (event) => `${event.resource_type} ${event.resource_id ?? ''}`.trim() },
      { header: 'ERROR', value: (event) => event.error_message, maxWidth: 50 },
    ],
    'No SCIM audit events.',
  );
}
