import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { startApi } from './api.ts';

// The real processes fault tests stop and start: a worker (workers/main.ts,
// with its dispatcher) and the profile's Temporal server.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function startWorker(env: Record<string, string>): ChildProcess {
  return spawn('sh', ['scripts/node.sh', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
}

/** SIGKILL, no goodbye. `sh` execs node, so the child is the worker itself. */
export async function kill(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGKILL');
  await exited;
}

/** Stops the Temporal server of this profile and starts it again on the same SQLite file. */
export async function restartTemporal(): Promise<void> {
  await promisify(execFile)('bash', ['scripts/stack.sh', 'restart', process.env.VALISE_PROFILE ?? 'dev', 'temporal'], {
    cwd: ROOT,
  });
}

/**
 * A fault scenario's in-process API and worker, on `env` and a task queue of their own (nothing of
 * the other tests' reaches them), both stopped when the test ends.
 */
export async function startApiAndWorker(t: ExecutionContext, env: Record<string, string>) {
  const own = { TEMPORAL_TASK_QUEUE: `fault-${randomUUID()}`, ...env };
  const api = await startApi(own);
  t.teardown(() => api.close());
  const worker = startWorker(own);
  t.teardown(() => kill(worker));
  return api;
}
