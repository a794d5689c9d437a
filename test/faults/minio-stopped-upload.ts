import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { ExecutionContext } from 'ava';
import { startPrivateMinio } from '../helpers/private-services.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { content, fetchBytes, links, put, waitForTransfer } from '../helpers/transfers.ts';

// MinIO stopped during an upload (issue #26): an API and a worker on a MinIO of the scenario's own;
// a client sends a file in one PUT, and MinIO is killed (by its pid) once a part of the file is
// stored. Checked: the client gets a retryable answer (503 `service_unavailable` in the envelope, or
// its connection cut while it was still sending), never a 500; while MinIO is down the upload URL
// still says where to resume, and nothing of the file is visible to a recipient; once MinIO is back,
// the client sends the rest from that offset, the transfer becomes active, and the file downloads
// byte for byte. `make test` runs it on 64 MiB, `make test-faults` on 1 GiB as well.

const SEND_STEP = 1024 * 1024;

/** Sends `bytes` as one PUT, calling `midway` once `pauseAt` bytes are written (the PUT waits for it). */
function streamingPut(url: string, bytes: Buffer, pauseAt: number, midway: () => Promise<void>) {
  return new Promise<{ status: number; body: string; retryAfter: string | null } | { cut: string }>((resolve) => {
    const target = new URL(url);
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: (response.headers['retry-after'] as string | undefined) ?? null,
          }),
        );
        response.on('error', (error) => resolve({ cut: error.message }));
      },
    );
    req.on('error', (error) => resolve({ cut: error.message }));
    (async () => {
      let paused = false;
      for (let offset = 0; offset < bytes.length; offset += SEND_STEP) {
        if (!paused && offset >= pauseAt) {
          paused = true;
          await midway();
        }
        if (req.destroyed) return;
        const more = req.write(bytes.subarray(offset, offset + SEND_STEP));
        if (!more) await new Promise((drained) => req.once('drain', drained).once('close', drained));
      }
      req.end();
    })().catch((error: Error) => resolve({ cut: error.message }));
  });
}

export async function minioStoppedDuringUpload(t: ExecutionContext, size: number) {
  const minio = await startPrivateMinio();
  t.teardown(() => minio.remove());
  const api = await startApiAndWorker(t, minio.env);
  const ws = await api.workspace('MinIO stopped');
  const bytes = content(size);
  const created = await api.call('POST', '/v1/transfers', {
    key: ws.keys.live,
    body: { files: [{ name: 'minio-down.bin', size }] },
  });
  t.is(created.status, 201, created.text);
  const url: string = created.body.upload_urls[0].url;
  const transferId: string = created.body.transfer.id;
  const status = async () => (await api.call('GET', url.slice(url.indexOf('/v1/')))).body;

  // Killed once the first parts are stored, while the client is still sending.
  const answer = await streamingPut(url, bytes, Math.floor(size * 0.4), async () => {
    const deadline = Date.now() + 60_000;
    while ((await status()).upload_offset === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await minio.stop();
    t.log(
      `injected: MinIO killed (SIGKILL) ${Math.round((size * 0.4) / 2 ** 20)} MiB into a ${size / 2 ** 20} MiB PUT`,
    );
  });
  if ('cut' in answer) t.log(`the client's connection was cut while sending: ${answer.cut}`);
  else {
    t.is(answer.status, 503, answer.body);
    t.like(JSON.parse(answer.body).error, { code: 'service_unavailable' });
    t.is(answer.retryAfter, '2');
  }

  // While MinIO is down: the URL says where to resume; no recipient sees anything of the file.
  const stored = await status();
  t.true(stored.upload_offset > 0 && stored.upload_offset < size, `resume from ${stored.upload_offset}`);
  t.is(stored.upload_offset % stored.part_size, 0, 'the stored bytes end at a part boundary');
  t.not(stored.upload_state, 'uploaded');
  const transfer = await api.call('GET', `/v1/transfers/${transferId}`, { key: ws.keys.live });
  t.not(transfer.body.status, 'active');
  const refused = await links(api, transfer.body.short_code);
  t.true(refused.status >= 400 && refused.status < 500, `a recipient gets no link yet (${refused.status})`);

  await minio.start();
  t.log('injected: MinIO started again');
  const offset: number = stored.upload_offset;
  const rest = await put(url, bytes.subarray(offset), {
    'content-range': `bytes ${offset}-${size - 1}/${size}`,
  });
  t.is(rest.status, 200, 'the rest, from the offset the URL gave, completes the file');
  const active = await waitForTransfer(api, ws.keys.live, transferId, (tr) => tr.status === 'active', 180_000);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  t.is(active.files[0].sha256, sha256);
  const issued = await links(api, active.short_code);
  const downloaded = await fetchBytes(issued.body.files[0].download_url);
  t.is(createHash('sha256').update(downloaded.bytes).digest('hex'), sha256, 'byte for byte');
  t.log(
    `checked: ${'cut' in answer ? 'connection cut' : `${answer.status} service_unavailable`}; resumed at ${offset}; active; the download is byte-identical`,
  );
}
