import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createScanner } from '../lib/scan/clamd.ts';

// How clamd answers streams around its single-file ceiling, and how long a
// scan of that size takes through lib/scan/clamd.ts (bench/README.md, "clamd's
// ceiling"). Against a clamd of your own, never the shared one:
//
//   sh scripts/node.sh bench/clamd-ceiling.ts <port> <bytes or file> [<bytes or file>...]
//
// A number of bytes is generated (a random 1 MiB block repeated, new for each
// run), so nothing of that size lands on disk or in this process's memory; a
// file is streamed as it is, to compare with `clamdscan --stream` on the same
// bytes (whose own config must then raise StreamMaxLength: clamdscan stops
// sending at it, 100M by default, and reports the truncated stream as OK).

const [port = '', ...sizes] = process.argv.slice(2);
if (!/^\d+$/.test(port) || sizes.length === 0) {
  console.error('usage: sh scripts/node.sh bench/clamd-ceiling.ts <port> <bytes or file> [<bytes or file>...]');
  process.exit(2);
}

const block = randomBytes(1024 * 1024);

function generated(total: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const chunk = block.subarray(0, Math.min(block.length, total - sent));
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

const scanner = createScanner({ host: '127.0.0.1', port: Number(port), timeoutMs: 120_000 });
for (const source of sizes) {
  const started = performance.now();
  const stream = /^\d+$/.test(source)
    ? generated(Number(source))
    : createReadStream(source, { highWaterMark: 1024 * 1024 });
  const result = await scanner.scan(stream);
  const seconds = (performance.now() - started) / 1000;
  console.log(`${source}${/^\d+$/.test(source) ? ' bytes' : ''}: ${JSON.stringify(result)} in ${seconds.toFixed(1)} s`);
}
