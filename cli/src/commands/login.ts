import { Valise } from '../../../sdk/src/index.ts';
import { expectPositionals, parseCommand } from '../args.ts';
import { configPath, DEFAULT_BASE_URL, readConfig, writeConfig } from '../config.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { note, printFields, printJson, printLine } from '../output.ts';
import { ask, canPrompt, readStdin } from '../prompt.ts';
import { visible } from '../terminal.ts';

const LOGIN_USAGE = 'valise login [--api-key KEY] [--base-url URL] [--no-verify] [--profile NAME]';

/** Checks the key with GET /v1/me, then stores it (and the base URL) in the profile. */
export async function login(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { 'api-key': { type: 'string' }, 'base-url': { type: 'string' }, 'no-verify': { type: 'boolean' } },
    LOGIN_USAGE,
  );
  expectPositionals(positionals, [], LOGIN_USAGE);
  const apiKey = values['api-key'] ?? (await keyFromUser(ctx.json));
  if (!/^svc_[a-z_]+_[A-Za-z0-9]+$/.test(apiKey)) {
    throw new UsageError('That does not look like a Valise API key (svc_live_…, svc_test_…, svc_rk_…).');
  }
  const baseUrl = values['base-url'] ?? process.env.VALISE_BASE_URL ?? ctx.settings.baseUrl ?? DEFAULT_BASE_URL;
  const me = values['no-verify'] ? null : await new Valise({ apiKey, baseUrl }).meta.me();

  const config = await readConfig();
  config.profiles[ctx.settings.profile] = { api_key: apiKey, base_url: baseUrl };
  await writeConfig(config);

  if (ctx.json) return printJson({ object: 'login', profile: ctx.settings.profile, config_path: configPath(), me });
  if (me) printLine(`Logged in to ${visible(me.workspace.name)} (${me.environment}) as ${visible(me.user.email)}.`);
  else printLine('Key stored without checking it.');
  note(`Saved to ${configPath()} (profile ${ctx.settings.profile}).`);
}

async function keyFromUser(json: boolean): Promise<string> {
  if (canPrompt(json)) return ask('API key: ');
  if (!process.stdin.isTTY) {
    const key = await readStdin();
    if (key) return key;
  }
  throw new UsageError('No API key given.', `Usage: ${LOGIN_USAGE}  (or pipe the key on stdin)`);
}

const LOGOUT_USAGE = 'valise logout [--profile NAME]';

export async function logout(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, LOGOUT_USAGE);
  expectPositionals(positionals, [], LOGOUT_USAGE);
  const config = await readConfig();
  const existed = ctx.settings.profile in config.profiles;
  delete config.profiles[ctx.settings.profile];
  await writeConfig(config);
  if (ctx.json) return printJson({ object: 'logout', profile: ctx.settings.profile, removed: existed });
  printLine(existed ? `Logged out of profile ${ctx.settings.profile}.` : `Profile ${ctx.settings.profile} had no key.`);
}

const WHOAMI_USAGE = 'valise whoami';

/** GET /v1/me with the key in effect (VALISE_API_KEY wins over the config file). */
export async function whoami(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, WHOAMI_USAGE);
  expectPositionals(positionals, [], WHOAMI_USAGE);
  const me = await ctx.client().meta.me();
  if (ctx.json) return printJson(me);
  printFields([
    ['workspace', `${me.workspace.name} (${me.workspace.id})`],
    ['user', `${me.user.email} (${me.user.role})`],
    ['environment', me.environment],
    ['key', `${me.api_key.id} (${me.api_key.key_type})`],
    ['scopes', me.scopes.join(' ')],
    ['api', ctx.settings.baseUrl],
  ]);
}
