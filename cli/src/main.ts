import { ConnectionError, ValiseError } from '../../sdk/src/index.ts';
import { describeApiError, exitCodeFor } from './api-errors.ts';
import { analytics } from './commands/analytics.ts';
import { archive } from './commands/archive.ts';
import { audit } from './commands/audit.ts';
import { billing } from './commands/billing.ts';
import { coffre } from './commands/coffre.ts';
import { collections } from './commands/collections.ts';
import { gdpr, legal } from './commands/gdpr.ts';
import { get } from './commands/get.ts';
import { intake } from './commands/intake.ts';
import { keys } from './commands/keys.ts';
import { listen } from './commands/listen.ts';
import { login, logout, whoami } from './commands/login.ts';
import { mcp } from './commands/mcp.ts';
import { recipients } from './commands/recipients.ts';
import { scim } from './commands/scim.ts';
import { resume, send } from './commands/send.ts';
import { approve, ls, rm, show } from './commands/transfers.ts';
import { webhooks } from './commands/webhooks.ts';
import type { GlobalFlags } from './context.ts';
import { type Context, createContext } from './context.ts';
import { CliError, EXIT_OK, EXIT_USAGE, UsageError } from './exit-codes.ts';
import { HELP } from './help.ts';
import { note, noteJson } from './output.ts';
import { visible } from './terminal.ts';

type Command = (argv: string[], ctx: Context) => Promise<void>;

const COMMANDS: Record<string, Command> = {
  login,
  logout,
  whoami,
  send,
  resume,
  get,
  ls,
  show,
  rm,
  approve,
  keys,
  webhooks,
  listen,
  audit,
  analytics,
  scim,
  mcp,
  collections,
  recipients,
  intake,
  intakes: intake,
  coffre,
  coffres: coffre,
  archive,
  gdpr,
  legal,
  billing,
};

/** Runs one command line and returns the exit code (docs/cli.md, "Exit codes"). */
export async function main(argv: string[]): Promise<number> {
  const flags = globalFlags(argv);
  let ctx: Context | undefined;
  try {
    const [name, ...rest] = commandFirst(argv);
    if (!name || name === 'help' || name === '--help' || name === '-h') {
      process.stdout.write(HELP);
      return EXIT_OK;
    }
    if (name === '--version' || name === 'version') {
      process.stdout.write('valise 0.1.0\n');
      return EXIT_OK;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`Unknown command: ${name}`);
    if (flags.help) {
      process.stdout.write(HELP);
      return EXIT_OK;
    }
    ctx = await createContext(flags);
    await command(rest, ctx);
    return EXIT_OK;
  } catch (error) {
    return report(error, flags.json, ctx?.settings.baseUrl ?? process.env.VALISE_BASE_URL ?? 'the API');
  }
}

/** --json and --profile may appear anywhere; each command parses them again with its own flags. */
function globalFlags(argv: string[]): GlobalFlags {
  const profileAt = argv.indexOf('--profile');
  const inline = argv.find((arg) => arg.startsWith('--profile='));
  return {
    json: argv.includes('--json'),
    profile: inline ? inline.slice('--profile='.length) : profileAt >= 0 ? argv[profileAt + 1] : undefined,
    help: argv.includes('--help') || argv.includes('-h'),
  };
}

/** `valise --json ls` is `valise ls --json`: global flags before the command move after it. */
function commandFirst(argv: string[]): string[] {
  const args = [...argv];
  const leading: string[] = [];
  while (args[0] && args[0] in LEADING_FLAGS) {
    const flag = args.shift() as string;
    leading.push(flag, ...(LEADING_FLAGS[flag] ? args.splice(0, 1) : []));
  }
  return args.length ? [...args, ...leading] : leading;
}

/** Global flags that may come before the command; true when they take a value. */
const LEADING_FLAGS: Record<string, boolean> = { '--json': false, '--profile': true };

/**
 * Prints a failure on stderr (with --json, as the API's error envelope) and picks the exit code.
 * Only unexpected failures get a stack trace.
 */
function report(error: unknown, json: boolean, baseUrl: string): number {
  if (error instanceof ValiseError) {
    const code = exitCodeFor(error);
    if (json) {
      const body = Object.keys(error.body).length ? error.body : { code: error.code, message: error.message };
      noteJson({ error: body });
    } else {
      const lines = describeApiError(error, baseUrl);
      if (error instanceof ConnectionError)
        lines[0] = `error: could not reach ${baseUrl}: ${error.message} (${error.code})`;
      // Each line may hold the server's words: one visible line each.
      note(lines.map((line) => visible(line)).join('\n'));
    }
    return code;
  }
  if (error instanceof CliError) {
    if (json) {
      const code = error instanceof UsageError ? 'usage_error' : 'cli_error';
      noteJson({ error: { code, message: error.message } });
    } else {
      note(`error: ${visible(error.message)}`);
      if (error.hint) note(error.hint);
    }
    return error.exitCode;
  }
  note(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return EXIT_USAGE;
}
