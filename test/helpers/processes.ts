import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { startApi } from './api.ts';

// The real processes fault tests stop and start: a worker (workers/main.ts,
// with its dispatcher) and the profile's Temporal server.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A worker process, with the last lines it wrote: what a scenario shows when the worker failed it. */
export type WorkerProcess = ChildProcess & { lastOutput(): string };

const KEPT_OUTPUT_BYTES = 16 * 1024;

export function startWorker(env: Record<string, string>): WorkerProcess {
  const child = spawn('sh', ['scripts/node.sh', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let kept = '';
  const keep = (chunk: Buffer) => {
    kept = (kept + chunk.toString('utf8')).slice(-KEPT_OUTPUT_BYTES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return Object.assign(child, { lastOutput: () => kept });
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

/** The worker of a fault scenario: killed and started again by the scenario, on the same settings. */
export type ScenarioWorker = {
  /** SIGKILL (`kill`); a worker killed already stays so. */
  kill(): Promise<void>;
  /** A new worker process (after `kill`). */
  start(): void;
  /** `kill`, then `start`: the scenario's worker replaced, mid-task, by a fresh one. */
  replace(): Promise<void>;
  /** Whether the worker process runs (it was not killed, and did not exit on its own). */
  running(): boolean;
  /** The last lines the current worker process wrote. */
  lastOutput(): string;
};

/**
 * A fault scenario's in-process API and worker, on `env` and a task queue of their own (nothing of
 * the other tests' reaches them), both stopped when the test ends. `worker` kills and replaces
 * the worker.
 */
export async function startApiAndWorker(t: ExecutionContext, env: Record<string, string>) {
  const own = { TEMPORAL_TASK_QUEUE: `fault-${randomUUID()}`, ...env };
  const api = await startApi(own);
  t.teardown(() => api.close());
  let current = startWorker(own);
  t.teardown(() => kill(current));
  const worker: ScenarioWorker = {
    kill: () => kill(current),
    start: () => {
      current = startWorker(own);
    },
    replace: async () => {
      await kill(current);
      current = startWorker(own);
    },
    running: () => current.exitCode === null && current.signalCode === null,
    lastOutput: () => current.lastOutput(),
  };
  return Object.assign(api, { worker });
}
