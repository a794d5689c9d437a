import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { freePort } from './helpers/ports.ts';

// scripts/scale.sh, what `VALISE_API_PROCESSES=2 make up` runs: two API processes behind haproxy on
// the API's address, recorded like the stack's processes, and all of them stopped again. In a state
// folder of its own, on free ports, against this run's database; no workers (VALISE_WORKERS=0): a
// worker here would take this run's tasks and stop with this test.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

test('scale.sh starts two API processes behind haproxy on the API address, reports them, and stops them', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'valise-scale-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, VALISE_DATA_DIR: data, API_PORT: String(port), VALISE_WORKERS: '0' };
  delete env.PUBLIC_BASE_URL;
  const scale = (action: string) => run('bash', ['scripts/scale.sh', action, 'dev'], { cwd: ROOT, env });
  t.teardown(async () => {
    await scale('stop').catch(() => {});
    await rm(data, { recursive: true, force: true });
  });

  await scale('start');
  const { stdout } = await scale('status');
  t.regex(stdout, /^api-1: up \(pid \d+\)$/m);
  t.regex(stdout, /^api-2: up \(pid \d+\)$/m);
  t.regex(stdout, /^balancer: up \(pid \d+\)$/m);
  t.notRegex(stdout, /worker/);

  // Through the balancer, and straight from each process: the links name the balancer.
  for (const base of [port, port + 1, port + 2]) {
    const welcome = await fetch(`http://127.0.0.1:${base}/v1/welcome`);
    t.is(welcome.status, 200);
    t.is(((await welcome.json()) as { openapi_url: string }).openapi_url, `http://127.0.0.1:${port}/v1/openapi.json`);
  }

  await scale('stop');
  const after = await scale('status').catch((error: { stdout: string; code: number }) => error);
  t.false(/: up/.test(after.stdout), after.stdout);
  await t.throwsAsync(fetch(`http://127.0.0.1:${port}/v1/welcome`));
});
