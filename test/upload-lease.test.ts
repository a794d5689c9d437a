import { request } from 'node:http';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// One request at a time writes a file, under a lease. A slow but live upload
// must keep its lease for as long as it sends, however long a part takes, so
// a second PUT of the same file cannot start writing beside it.

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  // A lease of 2 s: the slow upload below outlives it several times over.
  api = await startApi({ UPLOAD_LEASE: '2s', UPLOAD_IDLE_TIMEOUT: '10s' });
  ws = await api.workspace('Leases');
});
test.after.always(() => api.close());

/** A PUT that sends `bytes` in `pieces`, one every `everyMs`; resolves with the status. */
function trickle(url: string, bytes: Buffer, pieces: number, everyMs: number) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) },
    });
    req.on('response', (response) => {
      let body = '';
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    const step = Math.ceil(bytes.length / pieces);
    let sent = 0;
    const send = () => {
      const piece = bytes.subarray(sent, sent + step);
      sent += piece.length;
      if (sent >= bytes.length) req.end(piece);
      else {
        req.write(piece);
        setTimeout(send, everyMs);
      }
    };
    send();
  });
}

test('a slow upload keeps its lease past the lease time: a second PUT of the file is refused until it ends', async (t) => {
  const bytes = content(64 * 1024);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'slow.bin', size: bytes.length }] });
  const url = created.upload_urls[0]?.url ?? '';
  // About 7 s of sending, in which the 2 s lease would lapse three times over without renewal.
  const slow = trickle(url, bytes, 28, 250);

  await new Promise((resolve) => setTimeout(resolve, 4_000));
  const intruder = await put(url, bytes);
  t.is(intruder.status, 409, JSON.stringify(intruder.body));
  t.regex(intruder.body?.error?.message ?? '', /in progress/);
  // What a client whose PUT broke off asks, to know it should wait rather than count a failure.
  const during = (await (await fetch(url)).json()) as { upload_in_progress?: boolean };
  t.is(during.upload_in_progress, true);

  const finished = await slow;
  t.is(finished.status, 200, finished.body);
  const after = (await (await fetch(url)).json()) as { upload_in_progress?: boolean };
  t.is(after.upload_in_progress, false, 'the lease is released with the request');
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const link = (await links(api, created.transfer.short_code)).body.files[0].download_url;
  const downloaded = await fetchBytes(link);
  t.true(downloaded.bytes.equals(bytes), 'the file is the slow upload, byte for byte');
});
