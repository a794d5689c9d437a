import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { freePort } from './ports.ts';

// A PostgreSQL or a Redis of a fault test's own, on a free loopback port, that the test stops and
// starts by its process while an API uses it: the stack's shared ones keep serving the other tests.
// The same binaries as the stack's (scripts/stack.sh): Debian's PostgreSQL, run as its `postgres`
// user when we are root, and Debian's redis-server.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** A server process of a fault test: stop it (its way of shutting down) and start it again, as it was. */
export type PrivateService = {
  url: string;
  port: number;
  /** Stops the process by its pid and waits until it has exited. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes what it stored. */
  remove(): Promise<void>;
};

function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const version = readdirSync(base)
    .filter((name) => existsSync(join(base, name, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))[0];
  if (!version) throw new Error(`no PostgreSQL server under ${base}`);
  return join(base, version, 'bin');
}

/** As root, PostgreSQL runs as the `postgres` user (it refuses root). */
const asPostgres = (command: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0
    ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', command, ...args]]
    : [command, args];

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

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** One server process, started by `launch` and ready once `ready` says so, stopped with `signal`. */
function serverProcess(launch: () => ChildProcess, ready: () => Promise<void>, signal: NodeJS.Signals) {
  let server: ChildProcess | null = null;
  return {
    start: async () => {
      server = launch();
      await ready();
    },
    stop: async () => {
      if (!server) return;
      const stopping = exited(server);
      server.kill(signal);
      await stopping;
      server = null;
    },
  };
}

/**
 * A PostgreSQL cluster of its own, with the project's schema migrated into database `valise`.
 * `stop()` is PostgreSQL's fast shutdown (SIGINT): sessions are ended with 57P01, as in a restart.
 */
export async function startPrivatePostgres(): Promise<PrivateService> {
  const bin = postgresBin();
  const data = mkdtempSync(join(tmpdir(), 'valise-fault-pg-'));
  if (process.getuid?.() === 0) chownSync(data, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), -1);
  const [initdb, initArgs] = asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C.UTF-8',
  ]);
  await run(initdb, initArgs, { cwd: '/' });
  const port = await freePort();
  const { start, stop } = serverProcess(
    () => {
      const [postgres, args] = asPostgres(join(bin, 'postgres'), [
        ...['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=100'],
      ]);
      return spawn(postgres, args, { cwd: '/', stdio: 'ignore' });
    },
    async () => {
      await until(() => listening(port), 'postgres');
      // Accepting connections is not accepting queries yet (57P03 while it starts).
      await until(
        () =>
          run(join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres']).then(
            () => true,
            () => false,
          ),
        'pg_isready',
      );
    },
    'SIGINT',
  );
  await start();
  await run(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'valise']);
  const url = `postgres://postgres@127.0.0.1:${port}/valise`;
  await run('sh', ['scripts/node.sh', 'scripts/migrate.ts'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url } });
  return {
    url,
    port,
    stop,
    start,
    remove: async () => {
      await stop();
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A Redis of its own (nothing kept on disk). `stop()` is SIGTERM. */
export async function startPrivateRedis(): Promise<PrivateService> {
  const port = await freePort();
  const { start, stop } = serverProcess(
    () =>
      spawn(
        'redis-server',
        ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
        { cwd: tmpdir(), stdio: 'ignore' },
      ),
    () => until(() => listening(port), 'redis'),
    'SIGTERM',
  );
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, stop, start, remove: stop };
}

/**
 * A MinIO of its own (the stack's binary, .cache/bin/minio), with the project's bucket. `env` is
 * what an API or a worker needs to use it. `stop()` is SIGKILL: MinIO gone mid-request, as in a
 * crash; what it had written stays on its disk for `start()`.
 */
export async function startPrivateMinio(
  options: {
    /** Its disk a RAM filesystem of this size (mounted: root only), to be filled by a test. */
    diskMiB?: number;
  } = {},
): Promise<PrivateService & { env: Record<string, string> }> {
  const data = mkdtempSync(join(tmpdir(), 'valise-fault-minio-'));
  const disk = join(data, 'disk');
  if (options.diskMiB) {
    mkdirSync(disk);
    await run('mount', ['-t', 'tmpfs', '-o', `size=${options.diskMiB}m`, 'tmpfs', disk]);
  }
  const [port, consolePort] = [await freePort(), await freePort()];
  const password = randomBytes(24).toString('hex');
  const env = {
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_ACCESS_KEY_ID: 'valise-fault',
    S3_SECRET_ACCESS_KEY: password,
  };
  const { start, stop } = serverProcess(
    () =>
      spawn(join(ROOT, '.cache/bin/minio'), ['server', disk, '--certs-dir', join(data, 'certs')], {
        cwd: data,
        env: {
          ...process.env,
          MINIO_ROOT_USER: env.S3_ACCESS_KEY_ID,
          MINIO_ROOT_PASSWORD: password,
          MINIO_UPDATE: 'off',
          MINIO_ADDRESS: `127.0.0.1:${port}`,
          MINIO_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`,
        },
        stdio: 'ignore',
      }),
    () =>
      until(
        () =>
          fetch(`${env.S3_ENDPOINT}/minio/health/live`).then(
            (response) => response.ok,
            () => false,
          ),
        'minio',
      ),
    'SIGKILL',
  );
  await start();
  await run('sh', ['scripts/node.sh', 'scripts/ensure-bucket.ts'], { cwd: ROOT, env: { ...process.env, ...env } });
  return {
    url: env.S3_ENDPOINT,
    port,
    env,
    stop,
    start,
    remove: async () => {
      await stop();
      if (options.diskMiB) await run('umount', [disk]).catch(() => undefined);
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/**
 * A maildev of its own (the stack's SMTP capture): `env` points an API or a worker at its SMTP port,
 * `mailsTo` reads what it captured. `stop()` is SIGTERM; what it captured is in its folder.
 */
export async function startPrivateMaildev(): Promise<
  PrivateService & { env: Record<string, string>; mailsTo(address: string): Promise<Array<{ subject: string }>> }
> {
  const data = mkdtempSync(join(tmpdir(), 'valise-fault-maildev-'));
  const [smtp, web] = [await freePort(), await freePort()];
  writeFileSync(join(data, 'maildev.json'), '{}');
  const { start, stop } = serverProcess(
    () => {
      const environment = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith('MAILDEV_')),
      );
      return spawn(
        join(ROOT, 'node_modules/.bin/maildev'),
        [
          ...['--config', join(data, 'maildev.json'), '--ip', '127.0.0.1', '--smtp', String(smtp)],
          ...['--web-ip', '127.0.0.1', '--web', String(web), '--mail-directory', join(data, 'mail')],
        ],
        { cwd: data, env: environment, stdio: 'ignore' },
      );
    },
    async () => {
      await until(() => listening(smtp), 'maildev');
      await until(() => listening(web), 'maildev web');
    },
    'SIGTERM',
  );
  await start();
  return {
    url: `smtp://127.0.0.1:${smtp}`,
    port: smtp,
    env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp) },
    stop,
    start,
    remove: async () => {
      await stop();
      rmSync(data, { recursive: true, force: true });
    },
    mailsTo: async (address) => {
      const response = await fetch(`http://127.0.0.1:${web}/api/email?to.address=${encodeURIComponent(address)}`);
      return (await response.json()) as Array<{ subject: string }>;
    },
  };
}

/** Whether Temporal at `address` answers for the namespace `default`. */
async function namespaceAnswers(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 }).catch(() => null);
  if (!connection) return false;
  try {
    await connection.workflowService.describeNamespace({ namespace: 'default' });
    return true;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

/**
 * A Temporal of its own: the stack's dev server (.cache/bin/temporal, scripts/stack.sh) on a SQLite
 * file of its own, with the namespace `default` and Valise's search attributes. `env` points an API
 * or a worker at it. `stop()` is SIGTERM, as scripts/stack.sh stops it; `start()` serves the same
 * file again, so the workflows it held go on.
 */
export async function startPrivateTemporal(): Promise<PrivateService & { env: Record<string, string> }> {
  const data = mkdtempSync(join(tmpdir(), 'valise-fault-temporal-'));
  const port = await freePort();
  const env = { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_NAMESPACE: 'default' };
  const log = join(data, 'temporal.log');
  const { start, stop } = serverProcess(
    () => {
      // Its output goes to a file of its own, read when it does not come up.
      const output = openSync(log, 'a');
      const server = spawn(
        join(ROOT, '.cache/bin/temporal'),
        [
          ...['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port)],
          ...['--db-filename', join(data, 'temporal.db'), '--namespace', 'default', '--log-level', 'warn'],
          ...['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'],
          ...['--dynamic-config-value', 'frontend.enableServerVersionCheck=false'],
        ],
        { cwd: data, env: { ...process.env, TEMPORAL_VERSION_CHECK_DISABLED: '1' }, stdio: ['ignore', output, output] },
      );
      closeSync(output);
      return server;
    },
    async () => {
      await until(() => listening(port), 'temporal', 90_000).catch((error: Error) => {
        throw new Error(`${error.message}; its log ends:\n${readFileSync(log, 'utf8').slice(-2000)}`);
      });
      // Listening comes before serving: ready once the namespace answers through the frontend.
      await until(() => namespaceAnswers(env.TEMPORAL_ADDRESS), 'temporal namespace', 90_000);
    },
    'SIGTERM',
  );
  const remove = async () => {
    await stop();
    rmSync(data, { recursive: true, force: true });
  };
  try {
    await start();
    await run('sh', ['scripts/node.sh', 'scripts/temporal-search-attributes.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
  } catch (error) {
    // Not handed to the test, which could not remove it: nothing of it is left running or on disk.
    await remove();
    throw error;
  }
  return {
    url: env.TEMPORAL_ADDRESS,
    port,
    env,
    stop,
    start,
    remove,
  };
}
