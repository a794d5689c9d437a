import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/ports.ts';

// Drives the real `valise` binary (cli/bin/valise.js) in a child process, with
// a config directory of its own per test, so no test sees another's login.

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'cli/bin/valise.js');

export type Result = { code: number | null; stdout: string; stderr: string };

export type Cli = {
  home: string;
  env: Record<string, string>;
  run: (args: string[], options?: { env?: Record<string, string>; input?: string }) => Promise<Result>;
  /** Runs with --json, expects exit 0, and returns stdout parsed. */
  json: (args: string[], options?: { env?: Record<string, string>; input?: string }) => Promise<any>;
  spawn: (args: string[], env?: Record<string, string>) => ChildProcess;
};

export async function cli(baseUrl: string, apiKey?: string): Promise<Cli> {
  const home = await mkdtemp(join(tmpdir(), 'valise-cli-'));
  const inherited = { ...process.env } as Record<string, string>;
  delete inherited.VALISE_API_KEY;
  delete inherited.VALISE_PROFILE;
  const env: Record<string, string> = {
    ...inherited,
    XDG_CONFIG_HOME: home,
    VALISE_CONFIG: join(home, 'valise', 'config.json'),
    VALISE_BASE_URL: baseUrl,
    ...(apiKey ? { VALISE_API_KEY: apiKey } : {}),
  };
  const spawnCli = (args: string[], extra: Record<string, string> = {}) =>
    spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...env, ...extra }, stdio: 'pipe' });
  const run: Cli['run'] = (args, options = {}) =>
    new Promise((resolve, reject) => {
      const child = spawnCli(args, options.env);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin?.end(options.input ?? '');
    });
  const json: Cli['json'] = async (args, options = {}) => {
    const result = await run([...args, '--json'], options);
    if (result.code !== 0) {
      throw new Error(`valise ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    }
    return JSON.parse(result.stdout);
  };
  return { home, env, run, json, spawn: spawnCli };
}

/** Resolves with the first stdout line of a running child. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf('\n');
      if (newline >= 0) {
        child.stdout?.off('data', onData);
        resolve(buffered.slice(0, newline));
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing a line`)));
  });
}

/** A loopback port nothing listens on. */
export const closedPort = freePort;
