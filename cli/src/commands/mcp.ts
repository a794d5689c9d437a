import type { McpToken } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { formatTime, note, printJson, printLine, printTable } from '../output.ts';
import { withMfa } from '../prompt.ts';
import { listArguments, listOutput } from './lists.ts';

const USAGE = `valise mcp tokens create --scope SCOPE… [--name NAME] [--expires-in-days N] [--mfa-code CODE]
       valise mcp tokens ls [--limit N] [--all]
       valise mcp tokens revoke TOKEN_ID`;

export function mcp(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('mcp', { tokens }, USAGE, argv, ctx);
}

function tokens(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand('mcp tokens', { create, ls: list, list, revoke }, USAGE, argv, ctx);
}

/** The token is printed once, for the MCP client's settings (docs/mcp.md, "Connecting a client"). */
async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      'expires-in-days': { type: 'string' },
      'mfa-code': { type: 'string' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  if (!values.scope?.length) throw new UsageError('--scope is required (once per scope).', `Usage: ${USAGE}`);
  const days = values['expires-in-days'];
  if (days !== undefined && !(Number(days) > 0)) throw new UsageError('--expires-in-days wants a positive number.');
  const valise = ctx.client();
  const created = await withMfa(values['mfa-code'], ctx.json, (mfa_code) =>
    valise.mcp.createToken({
      scopes: values.scope as McpToken['scopes'],
      ...(values.name ? { name: values.name } : {}),
      ...(days !== undefined ? { expires_in_days: Number(days) } : {}),
      ...(mfa_code ? { mfa_code } : {}),
    }),
  );
  if (ctx.json) return printJson(created);
  note(
    `Created MCP token ${created.id} (${created.scopes.join(', ')}). Give it to your MCP client; it is shown this once:`,
  );
  printLine(created.token);
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { limit, all } = listArguments(argv, [], USAGE);
  const request = ctx.client().mcp.listTokens({ limit });
  await listOutput(ctx, request, all, (rows: McpToken[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (token) => token.id },
        { header: 'NAME', value: (token) => token.name, maxWidth: 30 },
        { header: 'PREFIX', value: (token) => token.token_prefix },
        { header: 'SCOPES', value: (token) => token.scopes.join(','), maxWidth: 40 },
        { header: 'STATE', value: (token) => (token.revoked_at ? 'revoked' : token.is_active ? 'active' : 'expired') },
        { header: 'LAST USED', value: (token) => formatTime(token.last_used_at) },
        { header: 'EXPIRES', value: (token) => formatTime(token.expires_at) },
      ],
      'No MCP tokens.',
    ),
  );
}

async function revoke(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['TOKEN_ID'], USAGE);
  const revoked = await ctx.client().mcp.revokeToken(id);
  if (ctx.json) return printJson(revoked);
  note(`Revoked MCP token ${revoked.id}: it no longer opens the hosted MCP endpoint.`);
}
