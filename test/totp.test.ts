import test from 'ava';
import { base32Decode, base32Encode, generateTotpSecret, totpCode, verifyTotp } from '../lib/crypto/totp.ts';

// RFC 6238 appendix B, SHA-1 seed "12345678901234567890"; our codes are the
// last six digits of the eight-digit reference values.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890'));
const vectors: Array<[number, string]> = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

for (const [seconds, code] of vectors) {
  test(`RFC 6238 vector at T=${seconds}`, (t) => {
    t.is(totpCode(RFC_SECRET, seconds * 1000), code);
  });
}

test('one 30-second step of drift is accepted either way, two are not', (t) => {
  const now = 1_700_000_000_000;
  const secret = generateTotpSecret();
  t.true(verifyTotp(secret, totpCode(secret, now), now));
  t.true(verifyTotp(secret, totpCode(secret, now - 30_000), now));
  t.true(verifyTotp(secret, totpCode(secret, now + 30_000), now));
  t.false(verifyTotp(secret, totpCode(secret, now - 60_000), now));
  t.false(verifyTotp(secret, totpCode(secret, now + 60_000), now));
});

test('malformed codes are refused', (t) => {
  const secret = generateTotpSecret();
  for (const code of ['', '12345', '1234567', 'abcdef', ' 123456', '12345６'])
    t.false(verifyTotp(secret, code, Date.now()));
});

test('base32 round-trips and secrets carry 160 bits', (t) => {
  const secret = generateTotpSecret();
  t.regex(secret, /^[A-Z2-7]{32}$/);
  t.is(base32Decode(secret).length, 20);
  t.deepEqual(base32Decode(base32Encode(Buffer.from('hello world'))), Buffer.from('hello world'));
});
