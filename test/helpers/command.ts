import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Runs a command to its end and collects what it printed: the tests that drive
// a tool (redocly, oapi-codegen, go, the make-test scripts, the entry points).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export type CommandResult = {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they came, interleaved. */
  output: string;
};

export type CommandOptions = {
  /** Default: the repository's root. */
  cwd?: string;
  /** The child's whole environment. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** SIGKILL after this long. Default: no limit. */
  timeoutMs?: number;
};

export function runCommand(command: string, args: string[], options: CommandOptions = {}): Promise<CommandResult> {
  const { cwd = ROOT, env = process.env, input = '', timeoutMs } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env });
    const result: CommandResult = { code: null, stdout: '', stderr: '', output: '' };
    child.stdout.on('data', (chunk) => {
      result.stdout += chunk;
      result.output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      result.stderr += chunk;
      result.output += chunk;
    });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ ...result, code });
    });
    // A child that exits without reading its input closes the pipe first: that EPIPE says nothing
    // about the command (its exit code does), and unhandled it would fail the caller at random.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
