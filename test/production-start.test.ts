import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import pg from 'pg';
import { freePort } from './helpers/ports.ts';

// What the Docker image runs (Dockerfile, docker-compose.yml): the entry points
// under plain node (its own type stripping, no tsx, no devDependency loaded)
// with NODE_ENV=production and secrets of their own, against the real stack.
// They get a database and a task queue of their own, so that their worker and
// outbox dispatcher never touch the other tests' work.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The V8 flags the image starts node with (Dockerfile, docker-compose.yml). */
const NODE_FLAGS = readFileSync(`${ROOT}/ops/node-flags`, 'utf8').trim().split(/\s+/);
const suffix = randomBytes(4).toString('hex');
const database = `valise_prodstart_${suffix}`;
const adminUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/valise');
adminUrl.pathname = '/postgres';
const databaseUrl = new URL(adminUrl);
databaseUrl.pathname = `/${database}`;

function productionEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    VALISE_SECRET: secret,
    MASTER_KEYS: masterKeys,
    // The payment processor's endpoint secret: the dev stack's published one is refused here.
    BILLING_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('hex')}`,
    DATABASE_URL: databaseUrl.href,
    TEMPORAL_TASK_QUEUE: `valise-prodstart-${suffix}`,
    REDIS_PREFIX: `valise-test:prodstart-${suffix}:`,
    ...extra,
  };
  // Test-only switches that production refuses, and anything that could load tsx.
  for (const name of ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'WEBHOOK_HOSTS', 'NODE_OPTIONS']) delete env[name];
  return env;
}
const secret = randomBytes(48).toString('base64');
const masterKeys = `prod-1:${randomBytes(32).toString('base64')}`;

type Started = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

/** `node <entry>` as the image runs it (its V8 flags, no loader); resolves once its output matches `ready`. */
async function start(entry: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Started> {
  const child = spawn(process.execPath, [...NODE_FLAGS, entry, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready after 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} before it was ready:\n${output}`));
    });
  });
  return { child, output: () => output, exited };
}

/** SIGTERM and wait (bounded) for the exit code. */
async function stop(process: Started): Promise<number | null> {
  process.child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
  const result = await Promise.race([process.exited, timeout]);
  if (result === 'timeout') {
    process.child.kill('SIGKILL');
    throw new Error(`no exit 30 s after SIGTERM:\n${process.output()}`);
  }
  return result;
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl.href });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

test.before(() => admin(`create database ${database}`));
test.after.always(() => admin(`drop database if exists ${database} with (force)`));

test('plain node runs migrate, the worker and the API under NODE_ENV=production, and they answer and stop cleanly', async (t) => {
  const migrate = await start('scripts/migrate.ts', [], productionEnv(), /migrate: \d+ applied/);
  t.is(await migrate.exited, 0, migrate.output());

  const worker = await start('workers/main.ts', [], productionEnv(), /polling task queue valise-prodstart-/);
  t.teardown(() => worker.child.kill('SIGKILL')); // if the API never starts (a no-op after a clean stop)
  const port = await freePort();
  const api = await start(
    'api/main.ts',
    [],
    productionEnv({ API_HOST: '127.0.0.1', API_PORT: String(port) }),
    /listening on/,
  );
  try {
    // Keys minted by the operator command under the same production secret open the API.
    const bootstrap = await start(
      'scripts/admin.ts',
      ['bootstrap', '--workspace', 'Prod', '--json'],
      productionEnv(),
      /\}\n/,
    );
    t.is(await bootstrap.exited, 0, bootstrap.output());
    const { keys } = JSON.parse(bootstrap.output().slice(bootstrap.output().indexOf('{')));

    const health = await fetch(`http://127.0.0.1:${port}/v1/health`);
    t.is(health.status, 200, await health.clone().text());
    t.is(((await health.json()) as { status: string }).status, 'ok');
    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${keys.test}` } });
    t.is(me.status, 200, await me.clone().text());
    t.is(((await me.json()) as { environment: string }).environment, 'test');
  } finally {
    t.is(await stop(api), 0, api.output());
    t.is(await stop(worker), 0, worker.output());
  }
  t.notRegex(api.output() + worker.output(), /ExperimentalWarning|tsx/);
});
