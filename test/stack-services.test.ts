import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { Redis } from 'ioredis';
import pg from 'pg';
import { freePort } from './helpers/ports.ts';

// The project's own PostgreSQL and Redis (scripts/stack.sh, for machines that
// run neither): started and stopped in a folder of their own, on free loopback
// ports, beside whatever stack is running.

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('stack.sh runs its own PostgreSQL and Redis on the chosen loopback ports, and stops them', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'valise-stack-'));
  await chmod(data, 0o755); // as root, the server runs as the postgres user, who must reach its folder
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VALISE_DATA_DIR: data,
    VALISE_OWN_SERVICES: '1',
    OWN_POSTGRES_PORT: String(pgPort),
    OWN_REDIS_PORT: String(redisPort),
  };
  // A choice that scripts/test.sh made for the real stack must not carry over.
  for (const name of ['OWN_POSTGRES', 'OWN_REDIS', 'POSTGRES_PORT', 'REDIS_PORT']) delete env[name];
  const stack = (action: string) =>
    promisify(execFile)('bash', ['scripts/stack.sh', action, 'test', 'postgres', 'redis'], {
      cwd: ROOT,
      env,
      timeout: 120_000,
    });
  t.teardown(async () => {
    await stack('stop').catch(() => undefined);
    await rm(data, { recursive: true, force: true });
  });

  await stack('start');
  const status = await stack('status');
  t.regex(status.stdout, new RegExp(`^postgres: up \\(pid \\d+, ports ${pgPort}\\)$`, 'm'));
  t.regex(status.stdout, new RegExp(`^redis: up \\(pid \\d+, ports ${redisPort}\\)$`, 'm'));

  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${pgPort}/postgres` });
  await client.connect();
  try {
    const settings = await client.query(
      "select current_setting('listen_addresses') as listen, current_setting('unix_socket_directories') as sockets, current_setting('data_directory') as folder",
    );
    t.deepEqual(settings.rows[0], { listen: '127.0.0.1', sockets: '', folder: join(data, 'test', 'postgres') });
    // Trust authentication, but for loopback (and no socket) only.
    const rules = await client.query('select type, address from pg_hba_file_rules');
    for (const rule of rules.rows) {
      t.true(rule.type === 'local' || ['127.0.0.1', '::1'].includes(rule.address), JSON.stringify(rule));
    }
    await client.query('create database valise_check');
  } finally {
    await client.end();
  }

  const redis = new Redis(`redis://127.0.0.1:${redisPort}/0`, { maxRetriesPerRequest: 1 });
  try {
    t.is(await redis.ping(), 'PONG');
    t.deepEqual(await redis.config('GET', 'save'), ['save', '']);
    t.deepEqual(await redis.config('GET', 'appendonly'), ['appendonly', 'no']);
  } finally {
    redis.disconnect();
  }

  await stack('stop');
  t.false(await listening(pgPort), 'PostgreSQL still listens after stop');
  t.false(await listening(redisPort), 'Redis still listens after stop');
  t.deepEqual(await readdir(join(data, 'test', 'pids')), []);
  // The cluster stays for the next start (the test profile wipes it per run itself).
  t.true(existsSync(join(data, 'test', 'postgres', 'PG_VERSION')));
});
