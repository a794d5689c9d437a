import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// What a benchmark's measured path is read against, measured in the same run.

/** AES-256-GCM on one core, `openssl speed`'s 16384-byte column, in MB/s (10⁶ bytes). */
export async function opensslSpeed() {
  const args = ['speed', '-evp', 'aes-256-gcm', '-seconds', '3'];
  const { stdout } = await promisify(execFile)('openssl', args);
  // "type  16 bytes  64 bytes … 16384 bytes" then "AES-256-GCM  40079.27k … 4226727.94k" (1000s of bytes/s).
  const lines = stdout.split('\n');
  const header = lines.find((line) => line.startsWith('type'));
  const values = lines.find((line) => /^aes-256-gcm\s/i.test(line));
  if (!header || !values) throw new Error(`cannot parse openssl speed:\n${stdout}`);
  const sizes = [...header.matchAll(/(\d+) bytes/g)].map((m) => Number(m[1]));
  const rates = [...values.matchAll(/([\d.]+)k/g)].map((m) => Number(m[1]));
  const column = sizes.includes(16384) ? sizes.indexOf(16384) : sizes.length - 1;
  const rate = rates[column];
  const blockBytes = sizes[column];
  if (rate === undefined || blockBytes === undefined) throw new Error(`cannot parse openssl speed:\n${stdout}`);
  return { command: `openssl ${args.join(' ')}`, block_bytes: blockBytes, mb_per_s: Math.round(rate / 100) / 10 };
}
