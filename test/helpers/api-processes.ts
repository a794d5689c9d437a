import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { callerAt } from './api.ts';
import { freePort } from './ports.ts';

// API processes as they run in production, each its own `node api/main.ts` with its own pools and
// credential cache, and Debian's haproxy in front of them with the project's configuration
// (ops/haproxy/valise.cfg, as scripts/scale.sh runs it): for tests of what must hold across
// processes (docs/operations.md).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));

export type RunningProcess = { url: string; port: number; pid: number; stop: () => Promise<void> };
export type ApiProcess = RunningProcess & { call: ReturnType<typeof callerAt> };

/** `node api/main.ts` on a free loopback port, with this process's environment and `env` on top. */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const running = await startNodeProcess('api/main.ts', env, '/v1/welcome');
  return { ...running, call: callerAt(running.url) };
}

/** A TypeScript entry point that serves on API_HOST:API_PORT, up once GET `probe` answers. */
export async function startNodeProcess(entry: string, env: Record<string, string>, probe: string) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // `sh` execs node: the child's pid is the server's own.
  const child = spawn('sh', ['scripts/node.sh', entry], {
    cwd: ROOT,
    env: { ...process.env, API_HOST: '127.0.0.1', API_PORT: String(port), PUBLIC_BASE_URL: url, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return { ...(await answering(child, url, entry, probe)), port };
}

/** haproxy with ops/haproxy/valise.cfg on a free port, balancing `backends`; up once `probe` answers through it. */
export async function startBalancer(backends: { port: number }[], probe = '/v1/welcome'): Promise<RunningProcess> {
  if (!HAPROXY) throw new Error("haproxy is missing: scripts/setup.sh --tests installs it (Debian's haproxy)");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = join(tmpdir(), `valise-haproxy-${port}.cfg`);
  const servers = backends.map((backend, i) => `    server api-${i + 1} 127.0.0.1:${backend.port}\n`);
  writeFileSync(config, readFileSync(join(ROOT, 'ops/haproxy/valise.cfg'), 'utf8') + servers.join(''));
  const child = spawn(HAPROXY, ['-db', '-f', config], {
    env: { ...process.env, VALISE_BALANCER_ADDRESS: `127.0.0.1:${port}` },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const running = await answering(child, url, 'haproxy', probe).catch((error: unknown) => {
    rmSync(config, { force: true });
    throw error;
  });
  const stop = async () => {
    await running.stop();
    rmSync(config, { force: true });
  };
  return { ...running, port, stop };
}

/** Waits until `url` answers GET `probe`; fails with the child's stderr if it exits first. */
async function answering(child: ChildProcess, url: string, what: string, probe: string) {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited, delay(15_000).then(() => 'timeout')])) === 'timeout') {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited: ${stderr}`);
    const up = await fetch(url + probe).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return { url, pid: child.pid ?? 0, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${what} did not answer within 60 s: ${stderr}`);
    }
    await delay(100);
  }
}
