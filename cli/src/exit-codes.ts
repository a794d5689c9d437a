// The exit codes scripts can rely on (docs/cli.md, "Exit codes").

export const EXIT_OK = 0;
/** A wrong command line, or a local problem (no key configured, a file missing). */
export const EXIT_USAGE = 1;
/** The API answered with an error. */
export const EXIT_API = 2;
/** No answer from the API: connection refused or reset, DNS, timeout. */
export const EXIT_NETWORK = 3;
/** A file to be written exists already, and --force was not given: it was left as it is. */
export const EXIT_EXISTS = 4;

/** A failure the CLI explains itself, without a stack trace. */
export class CliError extends Error {
  readonly exitCode: number;
  /** Extra lines printed after the message, e.g. what to do next. */
  readonly hint: string | undefined;

  constructor(message: string, options: { exitCode?: number; hint?: string } = {}) {
    super(message);
    this.exitCode = options.exitCode ?? EXIT_USAGE;
    this.hint = options.hint;
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: EXIT_USAGE, hint: hint ?? 'Run `valise help` for usage.' });
  }
}
