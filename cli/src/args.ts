import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { Context } from './context.ts';
import { UsageError } from './exit-codes.ts';

// Every command parses its own flags with node:util parseArgs; these are the
// flags every command accepts, and the translation of parse failures into
// usage errors (exit 1) with the command's own usage line.

export const GLOBAL_OPTIONS = {
  json: { type: 'boolean' },
  profile: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

export function parseCommand<O extends ParseArgsOptionsConfig>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options: { ...GLOBAL_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid arguments', `Usage: ${usage}`);
  }
}

/** Exactly `count` positionals, named in the usage line. */
export function expectPositionals(positionals: string[], names: string[], usage: string): string[] {
  if (positionals.length < names.length)
    throw new UsageError(`Missing ${names[positionals.length]}.`, `Usage: ${usage}`);
  if (positionals.length > names.length) {
    throw new UsageError(`Unexpected argument: ${positionals[names.length]}`, `Usage: ${usage}`);
  }
  return positionals;
}

export function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${flag} wants a positive integer, got ${value}.`);
  return Number(value);
}

/** `24h`, `7d`, `90m` or a plain number of hours, as hours. */
export function durationHours(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)([mhdw]?)$/.exec(value.trim());
  if (!match) throw new UsageError(`${flag} wants a duration such as 24h, 7d or 90m, got ${value}.`);
  const amount = Number(match[1]);
  const perUnit = { m: 1 / 60, h: 1, d: 24, w: 168, '': 1 }[match[2] as 'm' | 'h' | 'd' | 'w' | ''];
  const hours = amount * perUnit;
  if (hours <= 0) throw new UsageError(`${flag} must be more than zero.`);
  return hours;
}

/** `10M`, `512K`, `1G` or a number of bytes, as bytes per second. */
export function byteRate(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)([KMG]?)i?B?$/i.exec(value.trim());
  if (!match) throw new UsageError(`${flag} wants a rate such as 10M or 512K (bytes per second), got ${value}.`);
  const unit = (match[2] ?? '').toUpperCase() as '' | 'K' | 'M' | 'G';
  const bytes = Math.floor(Number(match[1]) * { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[unit]);
  if (bytes < 1) throw new UsageError(`${flag} must be at least 1 byte per second.`);
  return bytes;
}

export type Subcommand = (argv: string[], ctx: Context) => Promise<void>;

/** Runs `valise <group> <sub> …` from a table of subcommands (aliases are extra entries). */
export function runSubcommand(
  group: string,
  subcommands: Record<string, Subcommand>,
  usage: string,
  argv: string[],
  ctx: Context,
): Promise<void> {
  const [sub, ...rest] = argv;
  const run = sub !== undefined && Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
  if (!run) {
    throw new UsageError(sub ? `Unknown command: ${group} ${sub}` : `${group} needs a subcommand.`, `Usage: ${usage}`);
  }
  return run(rest, ctx);
}
