import { createHash } from 'node:crypto';
import test from 'ava';
import { Valise } from '../../sdk/src/index.ts';
import { startPrivateMinio } from '../helpers/private-services.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { content, createTransfer, links, put, waitForTransfer } from '../helpers/transfers.ts';

// MinIO stopped during a download (issue #26): an API on a MinIO of the scenario's own serves a
// 64 MiB file, read slowly, and MinIO is killed (SIGKILL, by its pid) once part of it has been
// received. Checked: a download link asked for while MinIO is down is a retryable 503
// `service_unavailable` in the envelope, before any byte; a plain client reading when MinIO dies
// sees its response cut short, never a body that ends as if whole; the SDK's download resumes
// (Range) once MinIO is back and writes the file byte for byte, counted as one download.

const SIZE = 64 * 1024 * 1024;
const STOP_AFTER = 8 * 1024 * 1024;

test('MinIO killed during a download: 503 before any byte, a cut response, and the SDK resumes byte for byte', async (t) => {
  const minio = await startPrivateMinio();
  t.teardown(() => minio.remove());
  const api = await startApiAndWorker(t, minio.env);
  const ws = await api.workspace('MinIO stopped download');
  const key = ws.keys.live;
  const bytes = content(SIZE);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const created = await createTransfer(api, key, { files: [{ name: 'minio-down.bin', size: SIZE }] });
  t.is((await put(created.upload_urls[0]?.url ?? '', bytes)).status, 200);
  await waitForTransfer(api, key, created.transfer.id, (tr) => tr.status === 'active', 120_000);
  const code = created.transfer.short_code;

  // At the start: nothing to stream, a retryable refusal in the envelope.
  const first = (await links(api, code)).body.files[0].download_url as string;
  await minio.stop();
  t.log('injected: MinIO killed (SIGKILL) before a download starts');
  const refused = await fetch(first);
  const refusal = (await refused.json()) as { error: { code: string } };
  t.is(refused.status, 503, JSON.stringify(refusal));
  t.is(refusal.error.code, 'service_unavailable');
  t.is(refused.headers.get('retry-after'), '2');
  await minio.start();
  t.log('injected: MinIO started again');

  // Mid-stream, a plain client: its response is cut, it never ends as if whole.
  const plain = await fetch(first);
  t.is(plain.status, 200);
  t.is(plain.headers.get('content-length'), String(SIZE));
  const reader = (plain.body as ReadableStream<Uint8Array>).getReader();
  let received = 0;
  while (received < STOP_AFTER) {
    const next = await reader.read();
    if (next.done) break;
    received += next.value.length;
  }
  await minio.stop();
  t.log(`injected: MinIO killed (SIGKILL) ${received} bytes into a plain client's download`);
  const ending = await (async () => {
    for (;;) {
      const next = await reader.read();
      if (next.done) return { done: true as const };
      received += next.value.length;
    }
  })().catch((error: Error) => ({ cut: error.message }));
  t.log(`the plain client: ${'cut' in ending ? `cut after ${received} bytes (${ending.cut})` : 'a clean end'}`);
  t.true('cut' in ending, 'the response is cut, not ended cleanly');
  t.true(received < SIZE, `${received} of ${SIZE} bytes`);
  await minio.start();

  // The SDK: MinIO killed mid-download and started again a second later; the download resumes.
  let resumes = 0;
  const valise = new Valise({
    baseUrl: api.url,
    fetch: (input, init) => {
      if (new Headers(init?.headers).has('range')) resumes++;
      return fetch(input, init);
    },
  });
  const hash = createHash('sha256');
  let written = 0;
  let restarted: Promise<void> | undefined;
  const sink = () =>
    new WritableStream<Uint8Array>({
      async write(chunk) {
        hash.update(chunk);
        written += chunk.length;
        if (written >= STOP_AFTER && !restarted) {
          await minio.stop();
          t.log(`injected: MinIO killed (SIGKILL) ${written} bytes into the SDK's download`);
          restarted = new Promise((resolve) => setTimeout(resolve, 1_000)).then(() => minio.start());
        }
      },
    });
  const downloaded = await valise.transfers.download(created.share_url, { to: sink });
  await restarted;
  t.is(downloaded.files[0]?.bytes, SIZE);
  t.is(hash.digest('hex'), sha256, 'byte for byte');
  t.true(resumes >= 1, `the SDK resumed with Range (${resumes} requests)`);
  const transfer = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key });
  t.is(transfer.body.total_downloads, 2, 'two downloads counted: the links asked for, never a resume');
  t.log(
    `checked: 503 service_unavailable with Retry-After 2 before any byte; a plain client cut after ${received} bytes; the SDK resumed (${resumes} Range requests) to the file byte for byte; 2 downloads counted`,
  );
});
