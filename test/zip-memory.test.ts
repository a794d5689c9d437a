import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, waitForTransfer } from './helpers/transfers.ts';

// The API's memory stays flat while it streams a 2 GiB archive: its RSS is sampled every 100 ms
// during the download, and what it grows over the last three quarters of the stream is bounded.
// The API runs in this process (test/helpers/api.ts), so the RSS is the API's plus a client that
// only counts the bytes it reads.

const MiB = 1024 * 1024;
const BIG = 2 * 1024 * MiB;
const LIMIT_MIB = 64;
const block = content(MiB);

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Archive memory');
});
test.after.always(() => api?.close());

/** `size` bytes of one 1 MiB block repeated, made as they are sent. */
function generated(size: number): Readable {
  let left = size;
  return new Readable({
    read() {
      if (left === 0) return void this.push(null);
      const chunk = block.subarray(0, Math.min(block.length, left));
      left -= chunk.length;
      this.push(chunk);
    },
  });
}

async function putStream(url: string, size: number) {
  const req = request(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
  });
  const [[response]] = await Promise.all([
    once(req, 'response') as Promise<[IncomingMessage]>,
    pipeline(generated(size), req),
  ]);
  response.resume();
  if (response.statusCode !== 200) throw new Error(`PUT answered ${response.statusCode}`);
}

const rssMib = () => process.memoryUsage.rss() / MiB;

test('streaming a 2 GiB archive keeps the API’s memory flat', async (t) => {
  const files = [
    { name: 'big.bin', size: BIG },
    { name: 'small-1.bin', size: 3 * MiB + 1 },
    { name: 'small-2.bin', size: 17 },
  ];
  const created = await createTransfer(api, ws.keys.live, { transfer_title: 'Memory', files });
  for (const [i, file] of files.entries()) await putStream(created.upload_urls[i]?.url ?? '', file.size);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active', 5 * 60_000);

  const link = await api.call('POST', `/v1/shares/${created.transfer.short_code}/archive-link`);
  t.is(link.status, 200, link.text);
  global.gc?.();
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(rssMib()), 100);
  const started = performance.now();
  let received = 0;
  try {
    const req = request(link.body.archive_url);
    req.end();
    const [response] = (await once(req, 'response')) as [IncomingMessage];
    t.is(response.statusCode, 200);
    t.is(Number(response.headers['content-length']), link.body.size);
    for await (const chunk of response) received += (chunk as Buffer).length;
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - started) / 1000;
  t.is(received, link.body.size);
  // The garbage collector's sawtooth (tens of MiB here) says nothing of a leak: the growth is the
  // mean of the last quarter over the mean of the second, and the peak is bounded far below what
  // holding the archive would take (2 GiB).
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const quarters = [0, 1, 2, 3].map((q) => samples.slice((q * samples.length) >> 2, ((q + 1) * samples.length) >> 2));
  const growth = mean(quarters[3] ?? []) - mean(quarters[1] ?? []);
  const peakOverStart = Math.max(...samples) - mean(quarters[0] ?? []);
  t.log(
    `${(received / 1e6 / seconds).toFixed(1)} MB/s over ${seconds.toFixed(1)} s, ${samples.length} samples; RSS ${Math.min(...samples).toFixed(0)}–${Math.max(...samples).toFixed(0)} MiB, quarter means ${quarters.map((q) => mean(q).toFixed(0)).join(', ')} MiB`,
  );
  t.true(samples.length >= 8, 'enough samples');
  t.true(growth < LIMIT_MIB, `RSS grew ${growth.toFixed(1)} MiB from the second quarter of the stream to the last`);
  t.true(peakOverStart < 4 * LIMIT_MIB, `the peak is ${peakOverStart.toFixed(1)} MiB above the first quarter`);
  await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
});
