import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadConfig } from '../lib/config.ts';
import { runCommand } from './helpers/command.ts';

// No process accepts the secrets this repository published as development
// defaults, whatever NODE_ENV says, and none has a default any more
// (docs/configuration.md, "Local secrets"); production also refuses values too
// regular to be secret ("Production"). The scripts give the processes they
// start values generated once per profile (scripts/lib.sh).

const DEV_SECRET = 'valise-dev-secret-do-not-use-in-production-0000000000';
const DEV_MASTER_KEYS = `dev-1:${Buffer.alloc(32, 0x5a).toString('base64')}`;
const strongSecret = () => randomBytes(48).toString('base64');
const strongKeys = () => `k1:${randomBytes(32).toString('base64')}`;
const DEV_S3_SECRET = 'valise-dev-secret';
// Three generated secrets, as the scripts export them.
const secrets = () => ({
  VALISE_SECRET: strongSecret(),
  MASTER_KEYS: strongKeys(),
  S3_SECRET_ACCESS_KEY: randomBytes(24).toString('base64url'),
});
// The production settings, minus the dev and test switches that production refuses on their own.
const production = (env: Record<string, string>) => ({ NODE_ENV: 'production', ...secrets(), ...env });

function refusal(env: Record<string, string>): string {
  const error = (() => {
    try {
      loadConfig(env);
    } catch (caught) {
      return caught as Error;
    }
    return null;
  })();
  return error?.message ?? 'accepted';
}

test('every NODE_ENV starts with random secrets, and none has a default for them', (t) => {
  for (const NODE_ENV of ['development', 'test', 'production']) {
    t.is(refusal({ NODE_ENV, ...secrets() }), 'accepted', NODE_ENV);
    const message = refusal({ NODE_ENV });
    for (const name of ['VALISE_SECRET', 'MASTER_KEYS', 'S3_SECRET_ACCESS_KEY'])
      t.regex(message, new RegExp(`${name}: is required: the project's scripts generate local ones`), NODE_ENV);
  }
});

test('the published development secrets are refused whatever NODE_ENV says', (t) => {
  for (const NODE_ENV of ['development', 'test', 'production']) {
    t.regex(
      refusal({ NODE_ENV, ...secrets(), VALISE_SECRET: DEV_SECRET }),
      /VALISE_SECRET: is a published development value, refused/,
      NODE_ENV,
    );
    t.regex(
      refusal({ NODE_ENV, ...secrets(), MASTER_KEYS: DEV_MASTER_KEYS }),
      /MASTER_KEYS: key "dev-1" is a published development value, refused/,
      NODE_ENV,
    );
    t.regex(
      refusal({ NODE_ENV, ...secrets(), S3_SECRET_ACCESS_KEY: DEV_S3_SECRET }),
      /S3_SECRET_ACCESS_KEY: is a published development value, refused/,
      NODE_ENV,
    );
  }
});

test('production refuses each published development secret, naming VALISE_SECRET', (t) => {
  for (const secret of [DEV_SECRET, 'valise-docker-dev-only-secret-change-me-000000']) {
    const message = refusal(production({ VALISE_SECRET: secret }));
    t.regex(message, /VALISE_SECRET: is a published development value, refused/, secret);
    t.notRegex(message, /MASTER_KEYS/);
  }
});

test('production refuses weak VALISE_SECRET values: too short, one repeated character, few distinct characters', (t) => {
  t.regex(refusal(production({ VALISE_SECRET: 'short-secret' })), /VALISE_SECRET: .*32/);
  t.regex(refusal(production({ VALISE_SECRET: 'a'.repeat(64) })), /VALISE_SECRET: is a single repeated character/);
  t.regex(refusal(production({ VALISE_SECRET: '0123'.repeat(16) })), /VALISE_SECRET: has only 4 distinct characters/);
});

test('production refuses the development master key and weak master keys, naming MASTER_KEYS and the key id', (t) => {
  t.regex(
    refusal(production({ MASTER_KEYS: DEV_MASTER_KEYS })),
    /MASTER_KEYS: key "dev-1" is a published development value, refused/,
  );
  // The dev key listed beside a good one is refused all the same.
  t.regex(refusal(production({ MASTER_KEYS: `${strongKeys()},${DEV_MASTER_KEYS}` })), /key "dev-1" is a published/);
  const zeros = `zero:${Buffer.alloc(32).toString('base64')}`;
  t.regex(refusal(production({ MASTER_KEYS: zeros })), /MASTER_KEYS: key "zero" is a single repeated byte/);
  const pattern = `abab:${Buffer.alloc(32, 'ab').toString('base64')}`;
  t.regex(refusal(production({ MASTER_KEYS: pattern })), /MASTER_KEYS: key "abab" has only 2 distinct bytes/);
  const short = `short:${randomBytes(16).toString('base64')}`;
  t.regex(refusal(production({ MASTER_KEYS: short })), /MASTER_KEYS: key "short" is shorter than 32 bytes/);
});

/** Runs an entry point with plain node (no tsx), in an environment of `env` alone (and PATH). */
const run = (entry: string, env: Record<string, string>) =>
  runCommand(process.execPath, [entry], { env: { PATH: process.env.PATH ?? '', ...env }, timeoutMs: 30_000 });

// Nothing is reachable at these addresses (port 9 is discard, closed here): the
// refusal must come before any connection is attempted.
const unreachable = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
  REDIS_URL: 'redis://127.0.0.1:9/0',
  TEMPORAL_ADDRESS: '127.0.0.1:9',
};

for (const entry of ['api/main.ts', 'workers/main.ts']) {
  test(`${entry} exits non-zero in production with the dev secret, saying why`, async (t) => {
    const { code, output } = await run(entry, production({ ...unreachable, VALISE_SECRET: DEV_SECRET }));
    t.not(code, 0);
    t.regex(output, /VALISE_SECRET: is a published development value, refused/);
  });

  test(`${entry} exits non-zero in development with the published MinIO password, saying why`, async (t) => {
    const env = { NODE_ENV: 'development', ...secrets(), ...unreachable, S3_SECRET_ACCESS_KEY: DEV_S3_SECRET };
    const { code, output } = await run(entry, env);
    t.not(code, 0);
    t.regex(output, /S3_SECRET_ACCESS_KEY: is a published development value, refused/);
  });

  test(`${entry} exits non-zero in production with the dev master key, saying why`, async (t) => {
    const { code, output } = await run(entry, production({ ...unreachable, MASTER_KEYS: DEV_MASTER_KEYS }));
    t.not(code, 0);
    t.regex(output, /MASTER_KEYS: key "dev-1" is a published development value/);
  });
}

/** Runs a function of scripts/lib.sh for the dev profile in a data folder of its own; prints the environment. */
const localSecrets = (data: string) =>
  runCommand('bash', ['-c', 'source scripts/lib.sh && load_profile dev && export_local_secrets && env'], {
    env: { PATH: process.env.PATH ?? '', VALISE_DATA_DIR: data },
    timeoutMs: 30_000,
  });

test('the scripts give their processes secrets generated once per profile, which the app accepts', async (t) => {
  const data = await mkdtemp(join(tmpdir(), 'valise-secrets-'));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  const parse = (output: string) =>
    Object.fromEntries(
      output.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
  const first = await localSecrets(data);
  t.is(first.code, 0, first.output);
  const env = parse(first.output);
  t.is(refusal({ NODE_ENV: 'development', ...env }), 'accepted');
  t.not(env.S3_SECRET_ACCESS_KEY, DEV_S3_SECRET);
  t.is((await stat(join(data, 'dev', 'secrets.env'))).mode & 0o777, 0o600);
  // The same values on every run: the profile's data stays readable.
  const again = parse((await localSecrets(data)).output);
  for (const name of ['VALISE_SECRET', 'MASTER_KEYS', 'S3_SECRET_ACCESS_KEY']) t.is(again[name], env[name], name);
});
