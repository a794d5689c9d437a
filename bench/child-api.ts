import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/ports.ts';

// The API as a child process for the benchmarks (`sh scripts/node.sh api/main.ts`, which execs
// node, so the child's pid is the API's and its memory can be read from /proc), on a free loopback
// port, rate limits out of the way, everything else from the environment.

const HUGE = '1000000000';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function startChildApi() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn('sh', ['scripts/node.sh', 'api/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      API_HOST: '127.0.0.1',
      API_PORT: String(port),
      PUBLIC_BASE_URL: url,
      RATE_LIMIT_READ: HUGE,
      RATE_LIMIT_WRITE: HUGE,
      RATE_LIMIT_EXPENSIVE: HUGE,
      RATE_LIMIT_PUBLIC: HUGE,
    },
    // The API's output goes to stderr with the bench's progress; stdout is the tables.
    stdio: ['ignore', 2, 2],
  });
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the API exited (${child.exitCode})`);
    const up = await fetch(`${url}/v1/welcome`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('the API did not answer within 60 s');
    await delay(250);
  }
  const pid = child.pid;
  // `sh` execs node: the child's pid must now be node running api/main.ts, not a shell around it.
  const exe = pid === undefined ? '' : basename(readlinkSync(`/proc/${pid}/exe`));
  const cmdline = pid === undefined ? '' : readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  if (pid === undefined || exe !== 'node' || !cmdline.includes('api/main.ts')) {
    child.kill('SIGKILL');
    throw new Error(`pid ${pid} is not the API's node process (${exe}: ${cmdline})`);
  }
  return { url, pid, cmdline: cmdline.trim(), stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timeout = delay(15_000).then(() => 'timeout');
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}
