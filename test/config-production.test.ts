import { randomBytes } from 'node:crypto';
import test from 'ava';
import { loadConfig } from '../lib/config.ts';
import { runCommand } from './helpers/command.ts';

// Production refuses the development secrets (docs/configuration.md,
// "Production"): the published dev values, and values too regular to be secret.

const DEV_SECRET = 'valise-dev-secret-do-not-use-in-production-0000000000';
const DEV_MASTER_KEYS = `dev-1:${Buffer.alloc(32, 0x5a).toString('base64')}`;
const strongSecret = () => randomBytes(48).toString('base64');
const strongKeys = () => `k1:${randomBytes(32).toString('base64')}`;
// The production settings, minus the dev and test switches that production refuses on their own.
const production = (env: Record<string, string>) => ({
  NODE_ENV: 'production',
  VALISE_SECRET: strongSecret(),
  MASTER_KEYS: strongKeys(),
  ...env,
});

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

test('production starts with random secrets, and development still defaults to the dev values', (t) => {
  t.is(refusal(production({})), 'accepted');
  t.is(loadConfig({ NODE_ENV: 'development' }).secret, DEV_SECRET);
  t.is(loadConfig({ NODE_ENV: 'test' }).masterKeys.spec, DEV_MASTER_KEYS);
});

test('production refuses each published development secret, naming VALISE_SECRET', (t) => {
  for (const secret of [DEV_SECRET, 'valise-docker-dev-only-secret-change-me-000000']) {
    const message = refusal(production({ VALISE_SECRET: secret }));
    t.regex(message, /VALISE_SECRET: is a published development value, refused in production/, secret);
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
    /MASTER_KEYS: key "dev-1" is a published development value, refused in production/,
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

test('production still requires both secrets when they are not set', (t) => {
  const message = refusal({ NODE_ENV: 'production' });
  t.regex(message, /VALISE_SECRET: is required in production/);
  t.regex(message, /MASTER_KEYS: is required in production/);
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
    t.regex(output, /VALISE_SECRET: is a published development value, refused in production/);
  });

  test(`${entry} exits non-zero in production with the dev master key, saying why`, async (t) => {
    const { code, output } = await run(entry, production({ ...unreachable, MASTER_KEYS: DEV_MASTER_KEYS }));
    t.not(code, 0);
    t.regex(output, /MASTER_KEYS: key "dev-1" is a published development value/);
  });
}
