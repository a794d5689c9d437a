import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  generateIntakeKeyPair,
  INTAKE_KEMS,
  unwrapContentKey,
  wrapContentKey,
} from '../sdk/src/crypto/intake-envelope.ts';
import { runCommand } from './helpers/command.ts';

// The intake key envelope (docs/intake-encryption.md) against an independent
// implementation: Go's standard library crypto/hpke, driven through
// test/fixtures/hpke-interop. Each KEM both ways: what the SDK wraps, Go opens;
// what Go seals to a key, the SDK opens; and an envelope bound to one intake
// does not open for another.

let dir: string;
let program: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'valise-hpke-'));
  program = join(dir, 'hpke-interop');
  const built = await runCommand('go', ['build', '-o', program, '.'], {
    cwd: new URL('fixtures/hpke-interop', import.meta.url).pathname,
    env: { ...process.env, GOTOOLCHAIN: 'local', PATH: `/usr/local/go/bin:${process.env.PATH}` },
    timeoutMs: 120_000,
  });
  if (built.code !== 0) throw new Error(`go build: ${built.output}`);
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));
const info = (intakeId: string) => hex(new TextEncoder().encode(`valise intake v1\n${intakeId}`));

async function go(...args: string[]): Promise<string[]> {
  const result = await runCommand(program, args, { timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`hpke-interop ${args[0]}: ${result.stderr}`);
  return result.stdout.trim().split(' ');
}

for (const kem of INTAKE_KEMS) {
  test(`${kem}: a content key wrapped by the SDK opens with Go's crypto/hpke`, async (t) => {
    const owner = await generateIntakeKeyPair(kem);
    const contentKey = crypto.getRandomValues(new Uint8Array(32));
    const wrapped = await wrapContentKey({ kem, publicKey: owner.publicKey, contentKey, intakeId: 'in_interop' });
    const [opened] = await go(
      'open',
      kem,
      hex(owner.privateKey),
      info('in_interop'),
      hex(wrapped.enc),
      hex(wrapped.wrappedKey),
    );
    t.is(opened, hex(contentKey));
    await t.throwsAsync(
      go('open', kem, hex(owner.privateKey), info('in_other'), hex(wrapped.enc), hex(wrapped.wrappedKey)),
      { message: /hpke-interop open/ },
      'bound to its intake',
    );
  });

  test(`${kem}: a content key sealed by Go's crypto/hpke opens with the SDK, and only for its intake`, async (t) => {
    const [publicKey = '', privateKey = ''] = await go('keygen', kem);
    const contentKey = crypto.getRandomValues(new Uint8Array(32));
    const [enc = '', wrappedKey = ''] = await go('seal', kem, publicKey, info('in_interop'), hex(contentKey));
    const opened = await unwrapContentKey({
      kem,
      privateKey: bytes(privateKey),
      enc: bytes(enc),
      wrappedKey: bytes(wrappedKey),
      intakeId: 'in_interop',
    });
    t.is(hex(opened), hex(contentKey));
    await t.throwsAsync(
      unwrapContentKey({
        kem,
        privateKey: bytes(privateKey),
        enc: bytes(enc),
        wrappedKey: bytes(wrappedKey),
        intakeId: 'in_other',
      }),
    );
    const tampered = bytes(wrappedKey);
    tampered[0] = (tampered[0] ?? 0) ^ 1;
    await t.throwsAsync(
      unwrapContentKey({
        kem,
        privateKey: bytes(privateKey),
        enc: bytes(enc),
        wrappedKey: tampered,
        intakeId: 'in_interop',
      }),
    );
  });
}
