import { randomBytes } from 'node:crypto';
import test from 'ava';
import {
  generateDataKey,
  KeyWrapError,
  parseKeyring,
  rewrapDataKey,
  unwrapDataKey,
  wrapDataKey,
  wrappedKeyId,
} from '../lib/crypto/key-wrap.ts';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const spec1 = `k1:${k1.toString('base64')}`;
const spec12 = `${spec1},k2:${k2.toString('base64')}`;

test('a wrapped data key round-trips and names its master key', (t) => {
  const keyring = parseKeyring(spec1);
  const dataKey = generateDataKey();
  t.is(dataKey.length, 32);
  t.notDeepEqual(generateDataKey(), dataKey);
  const wrapped = wrapDataKey(keyring, dataKey, 'fil_123');
  t.regex(wrapped, /^v1\.k1\.[\w-]{16}\.[\w-]{64}$/);
  t.is(wrappedKeyId(wrapped), 'k1');
  t.deepEqual(unwrapDataKey(keyring, wrapped, 'fil_123'), dataKey);
  t.not(wrapDataKey(keyring, dataKey, 'fil_123'), wrapped, 'a fresh IV each time');
});

test('rotation: old wraps still open, new wraps use the new current key', (t) => {
  const before = parseKeyring(spec1);
  const dataKey = generateDataKey();
  const old = wrapDataKey(before, dataKey, 'fil_1');
  const after = parseKeyring(spec12);
  t.is(after.currentId, 'k2');
  t.deepEqual(unwrapDataKey(after, old, 'fil_1'), dataKey);
  const fresh = wrapDataKey(after, dataKey, 'fil_1');
  t.is(wrappedKeyId(fresh), 'k2');
  // Before step 2 of a rotation the old key stays current even though the new one is listed.
  t.is(wrappedKeyId(wrapDataKey(parseKeyring(spec12, 'k1'), dataKey, 'fil_1')), 'k1');
  // Re-wrapping moves a key to the current master key, after which the old one can go.
  const moved = rewrapDataKey(after, old, 'fil_1');
  t.is(wrappedKeyId(moved), 'k2');
  t.is(rewrapDataKey(after, moved, 'fil_1'), moved);
  t.deepEqual(unwrapDataKey(parseKeyring(`k2:${k2.toString('base64')}`), moved, 'fil_1'), dataKey);
});

test('the wrong aad, an unknown key id or an altered value do not open', (t) => {
  const keyring = parseKeyring(spec12);
  const wrapped = wrapDataKey(keyring, generateDataKey(), 'fil_1');
  t.like(
    t.throws(() => unwrapDataKey(keyring, wrapped, 'fil_2')),
    { name: 'KeyWrapError', reason: 'integrity' },
  );
  const unknown = t.throws(() => unwrapDataKey(parseKeyring(spec1), wrapped, 'fil_1'), { instanceOf: KeyWrapError });
  t.is(unknown?.reason, 'unknown-key');
  t.regex(unknown?.message ?? '', /"k2"/);
  // The same value under another master key fails its tag, as does any altered character.
  const relabelled = wrapped.replace(/^v1\.k2\./, 'v1.k1.');
  t.like(
    t.throws(() => unwrapDataKey(keyring, relabelled, 'fil_1')),
    { reason: 'integrity' },
  );
  const parts = wrapped.split('.');
  const body = parts[3] as string;
  parts[3] = (body[0] === 'A' ? 'B' : 'A') + body.slice(1);
  t.like(
    t.throws(() => unwrapDataKey(keyring, parts.join('.'), 'fil_1')),
    { reason: 'integrity' },
  );
  for (const malformed of ['', 'v1.k2', 'v2.k2.a.b', `${wrapped}.x`, wrapped.slice(0, -2), 'v1.K2.a.b']) {
    t.like(
      t.throws(() => unwrapDataKey(keyring, malformed, 'fil_1')),
      { reason: 'malformed' },
      malformed,
    );
  }
  t.throws(() => wrapDataKey(keyring, randomBytes(16), 'fil_1'), { instanceOf: TypeError });
});

test('keyring specs', (t) => {
  const keyring = parseKeyring(` ${spec12} `);
  t.deepEqual([...keyring.keys.keys()], ['k1', 'k2']);
  t.deepEqual(keyring.keys.get('k1'), k1);
  t.is(parseKeyring(spec12, 'k1').currentId, 'k1');
  // URL-safe base64 and unpadded keys are accepted too.
  t.deepEqual(parseKeyring(`a-1:${k1.toString('base64url')}`).keys.get('a-1'), k1);
});

test('malformed keyring specs are refused, without quoting key material', (t) => {
  const short = randomBytes(16).toString('base64');
  const cases: Array<[string, string | undefined, RegExp]> = [
    ['', undefined, /empty/],
    ['   ', undefined, /empty/],
    [k1.toString('base64'), undefined, /entry 1 is not id:base64key/],
    [`K1:${k1.toString('base64')}`, undefined, /entry 1: key id/],
    [`${'x'.repeat(33)}:${k1.toString('base64')}`, undefined, /entry 1: key id/],
    [`k1.x:${k1.toString('base64')}`, undefined, /entry 1: key id/],
    [`:${k1.toString('base64')}`, undefined, /entry 1: key id/],
    [`k1:${short}`, undefined, /entry 1 \("k1"\): the key must be 32 bytes/],
    [`k1:${k1.toString('hex')}`, undefined, /32 bytes/],
    [`k1:${k1.toString('base64')}!`, undefined, /32 bytes/],
    [`${spec1},`, undefined, /entry 2 is not/],
    [`${spec1},k1:${k2.toString('base64')}`, undefined, /listed twice/],
    [spec12, 'k3', /"k3" is not in the keyring/],
  ];
  for (const [spec, current, message] of cases) {
    const error = t.throws(() => parseKeyring(spec, current), undefined, spec);
    t.regex(error?.message ?? '', message, spec);
    t.false((error?.message ?? '').includes(short) || (error?.message ?? '').includes(k1.toString('base64')));
  }
});
