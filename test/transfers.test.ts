import { createHash } from 'node:crypto';
import test from 'ava';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress, waitForMail } from './helpers/mail.ts';
import { content, createTransfer, EICAR, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Transfers');
});
test.after.always(() => api.close());

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const MiB = 1024 * 1024;

async function storedBlob(objectKey: string): Promise<Buffer | null> {
  if ((await api.services.objects.size(objectKey)) === null) return null;
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await api.services.objects.read(objectKey)) chunks.push(chunk as Buffer);
  } catch (error) {
    // Deleted between the two calls: the workflow removing it is what the callers wait for.
    if ((error as Error).name === 'NoSuchKey') return null;
    throw error;
  }
  return Buffer.concat(chunks);
}

async function objectKeys(transferId: string) {
  return (await createTransferQueries(api.services.db).files(transferId)).map((f) => f.object_key);
}

test('a multi-file transfer is uploaded, scanned, activated and downloaded byte-identical', async (t) => {
  const small = content(300 * 1024);
  const large = content(9 * MiB + 123);
  const empty = Buffer.alloc(0);
  const recipient = uniqueAddress('recipient');
  const created = await createTransfer(api, ws.keys.live, {
    transfer_title: 'Quarterly report ✓',
    recipient,
    files: [
      { name: 'report.pdf', size: small.length, mime_type: 'application/pdf' },
      { name: 'données brutes.bin', size: large.length },
      { name: 'empty.txt', size: 0, mime_type: 'text/plain' },
    ],
  });
  t.is(created.upload_urls.length, 3);
  t.regex(created.share_url, /\/t\/[0-9A-Za-z]{10}$/);
  const [first, second, third] = created.upload_urls;
  const uploaded = await put(first?.url ?? '', small);
  t.is(uploaded.status, 200, JSON.stringify(uploaded.body));
  t.is(uploaded.body.sha256, sha256(small));
  t.is((await put(second?.url ?? '', large)).status, 200);
  t.is((await put(third?.url ?? '', empty)).status, 200);

  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  t.is(active.scan_status, 'clean');
  t.deepEqual(
    active.files.map((f: any) => [f.name, f.upload_state, f.scan_status, f.sha256]),
    [
      ['report.pdf', 'uploaded', 'clean', sha256(small)],
      ['données brutes.bin', 'uploaded', 'clean', sha256(large)],
      ['empty.txt', 'uploaded', 'clean', sha256(empty)],
    ],
  );

  const mail = await waitForMail(recipient, /.+/);
  // The worker builds links from its own PUBLIC_BASE_URL; the test API listens elsewhere.
  // The recipient's personal link to the transfer (docs/recipients.md).
  const personal = new URL(active.recipients[0].share_url).pathname;
  t.true(mail.text.includes(personal), 'the recipient is mailed their link');
  t.true(mail.text.includes('Quarterly report ✓'));

  const issued = await links(api, created.transfer.short_code);
  t.is(issued.status, 200, issued.text);
  const bodies = [small, large, empty];
  for (const [index, link] of issued.body.files.entries()) {
    const download = await fetchBytes(link.download_url);
    t.is(download.status, 200);
    t.true(download.bytes.equals(bodies[index] as Buffer), `file ${index} is byte-identical`);
    t.is(download.headers.get('content-length'), String(bodies[index]?.length));
    t.is(link.download_expires_in, 300);
  }
  // A link is spent once it has sent its file (docs/transfers.md, "Download links"): ask again.
  const again = await links(api, created.transfer.short_code);
  const pdf = await fetchBytes(again.body.files[0].download_url);
  t.is(pdf.headers.get('content-type'), 'application/pdf');
  const unicode = await fetchBytes(again.body.files[1].download_url);
  t.regex(unicode.headers.get('content-disposition') ?? '', /filename\*=UTF-8''donn%C3%A9es%20brutes\.bin/);
});

test('a file is scanned as soon as its upload is complete, while the transfer still waits for the others', async (t) => {
  const first = content(2 * MiB + 17);
  const second = content(64 * 1024);
  const created = await createTransfer(api, ws.keys.live, {
    files: [
      { name: 'first.bin', size: first.length },
      { name: 'second.bin', size: second.length },
    ],
  });
  t.is((await put(created.upload_urls[0]?.url ?? '', first)).status, 200);
  const halfway = await waitForTransfer(
    api,
    ws.keys.live,
    created.transfer.id,
    (tr) => tr.files[0].scan_status === 'clean',
  );
  t.deepEqual([halfway.status, halfway.status_reason], ['scanning', 'uploading'], 'still waiting for a file');
  t.is(halfway.files[0].sha256, sha256(first), 'the worker hashed what was uploaded');
  t.is(halfway.files[1].upload_state, 'pending', 'the second file is not in yet');

  t.is((await put(created.upload_urls[1]?.url ?? '', second)).status, 200);
  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  t.deepEqual(
    active.files.map((f: any) => [f.scan_status, f.sha256]),
    [
      ['clean', sha256(first)],
      ['clean', sha256(second)],
    ],
  );
});

test('stored objects never contain the plaintext', async (t) => {
  const secret = content(200 * 1024, 'TOP-SECRET-PLAINTEXT-NEEDLE');
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'secret.bin', size: secret.length }] });
  await put(created.upload_urls[0]?.url ?? '', secret);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const [key] = await objectKeys(created.transfer.id);
  const blob = await storedBlob(key ?? '');
  t.truthy(blob);
  t.is(blob?.subarray(0, 4).toString(), 'VAL1');
  t.false(blob?.includes('TOP-SECRET-PLAINTEXT-NEEDLE'));
  t.false(blob?.includes(secret.subarray(1000, 1064)), 'no 64-byte run of plaintext survives');
});

test('an EICAR upload ends infected, with no downloadable content left', async (t) => {
  const created = await createTransfer(api, ws.keys.live, {
    files: [
      { name: 'clean.txt', size: 11 },
      { name: 'eicar.com', size: EICAR.length },
    ],
  });
  await put(created.upload_urls[0]?.url ?? '', Buffer.from('hello world'));
  await put(created.upload_urls[1]?.url ?? '', Buffer.from(EICAR));
  const ended = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'deleted');
  t.is(ended.scan_status, 'infected');
  t.is(ended.status_reason, 'infected');
  t.is(ended.files[1].scan_status, 'infected');
  const refused = await links(api, created.transfer.short_code);
  t.is(refused.status, 410);
  t.is(refused.body.error.reason, 'infected');
  for (const key of await objectKeys(created.transfer.id)) {
    await eventually(async () => ((await storedBlob(key)) === null ? true : undefined));
  }
  const files = await createTransferQueries(api.services.db).files(created.transfer.id);
  t.true(
    files.every((f) => f.data_key_wrapped === null),
    'data keys destroyed',
  );
});

test('an interrupted upload resumes from the stored offset, and Range downloads match', async (t) => {
  const data = content(17 * MiB + 4321);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'big.bin', size: data.length }] });
  const url = created.upload_urls[0]?.url ?? '';

  // Send a little over one part, wait until the server has stored that part, then cut the connection.
  const controller = new AbortController();
  const partial = new ReadableStream<Uint8Array>({
    start(stream) {
      stream.enqueue(data.subarray(0, 9 * MiB));
    },
  });
  const interrupted = fetch(url, {
    method: 'PUT',
    body: partial,
    duplex: 'half',
    signal: controller.signal,
  } as RequestInit).catch(() => null);
  const offset = async () => {
    const head = await fetch(url, { method: 'HEAD' });
    return { offset: Number(head.headers.get('upload-offset')), length: Number(head.headers.get('upload-length')) };
  };
  await eventually(async () => ((await offset()).offset > 0 ? true : undefined), 60_000);
  controller.abort();
  await interrupted;
  const status = await offset();
  t.is(status.offset, 8 * MiB, 'one whole part survived');
  t.is(status.length, data.length);

  const wrongOffset = await put(url, data.subarray(MiB), {
    'content-range': `bytes ${MiB}-${data.length - 1}/${data.length}`,
  });
  t.is(wrongOffset.status, 409);
  t.is(wrongOffset.body.error.upload_offset, 8 * MiB);

  const resumed = await eventually(async () => {
    const attempt = await put(url, data.subarray(status.offset), {
      'content-range': `bytes ${status.offset}-${data.length - 1}/${data.length}`,
    });
    return attempt.status === 409 && attempt.body.error.message.includes('in progress') ? undefined : attempt;
  });
  t.is(resumed.status, 200, JSON.stringify(resumed.body));
  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  t.is(active.files[0].sha256, sha256(data), 'the checksum is computed at finalisation for a resumed upload');

  const link = async () => (await links(api, created.transfer.short_code)).body.files[0].download_url;
  const whole = await fetchBytes(await link());
  t.true(whole.bytes.equals(data));
  for (const [range, start, end] of [
    ['bytes=0-0', 0, 0],
    ['bytes=100-200000', 100, 200000],
    [`bytes=${8 * MiB - 10}-${8 * MiB + 10}`, 8 * MiB - 10, 8 * MiB + 10],
    ['bytes=-1000', data.length - 1000, data.length - 1],
    [`bytes=${data.length - 5}-`, data.length - 5, data.length - 1],
  ] as const) {
    // A fresh link per range: one that has sent the file's last byte serves no range from byte 0.
    const part = await fetchBytes(await link(), { range });
    t.is(part.status, 206, range);
    t.is(part.headers.get('content-range'), `bytes ${start}-${end}/${data.length}`);
    t.true(part.bytes.equals(data.subarray(start, end + 1)), range);
  }
  const outside = await fetchBytes(await link(), { range: `bytes=${data.length}-` });
  t.is(outside.status, 416);
});

test('a PUT with more or fewer bytes than declared is rejected and nothing becomes visible', async (t) => {
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'exact.bin', size: 1000 }] });
  const url = created.upload_urls[0]?.url ?? '';
  const longer = await put(url, Buffer.alloc(1001));
  t.is(longer.status, 400);
  t.is(longer.body.error.param, 'Content-Length');
  const shorter = await put(url, Buffer.alloc(999));
  t.is(shorter.status, 400);
  // Chunked bodies carry no Content-Length: the stream itself is measured.
  for (const size of [999, 1001, 5000]) {
    const chunked = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new ReadableStream({
        start(stream) {
          stream.enqueue(new Uint8Array(size));
          stream.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    t.is(chunked.status, 400, `chunked body of ${size} bytes`);
    t.is(((await chunked.json()) as any).error.param, 'body');
  }
  const transfer = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.not(transfer.body.files[0].upload_state, 'uploaded');
  t.is(transfer.body.status, 'scanning');
  t.is((await links(api, created.transfer.short_code)).status, 403);
  t.is((await put(url, Buffer.alloc(1000, 7))).status, 200);
});

test('tampering with one stored byte makes the download fail loudly', async (t) => {
  const data = content(200 * 1024);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'tamper.bin', size: data.length }] });
  await put(created.upload_urls[0]?.url ?? '', data);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const [key] = await objectKeys(created.transfer.id);
  const blob = (await storedBlob(key ?? '')) as Buffer;
  blob[150_000] = (blob[150_000] ?? 0) ^ 0x01;
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  await api.services.objects.client.send(
    new PutObjectCommand({ Bucket: api.services.objects.bucket, Key: key ?? '', Body: blob }),
  );
  const issued = await links(api, created.transfer.short_code);
  // Loudly: refused, or the response breaks off; never a complete 200 with other bytes (silent corruption).
  const outcome = await fetchBytes(issued.body.files[0].download_url).then(
    (r) =>
      r.status !== 200 ? `refused with ${r.status}` : r.bytes.equals(data) ? 'identical' : 'altered bytes delivered',
    () => 'broken off',
  );
  t.true(outcome === 'broken off' || outcome.startsWith('refused with'), outcome);
});

test('revoking deletes the transfer at once: keys destroyed, downloads refused, objects removed', async (t) => {
  const data = content(50 * 1024);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'revoke.bin', size: data.length }] });
  await put(created.upload_urls[0]?.url ?? '', data);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const issued = await links(api, created.transfer.short_code);
  const revoked = await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.is(revoked.status, 200);
  t.is(revoked.body.status, 'deleted');
  const files = await createTransferQueries(api.services.db).files(created.transfer.id);
  t.true(
    files.length > 0 && files.every((f) => f.data_key_wrapped === null),
    'data keys destroyed by the time DELETE answers',
  );
  const late = await fetchBytes(issued.body.files[0].download_url);
  t.is(late.status, 410);
  const [key] = await objectKeys(created.transfer.id);
  await eventually(async () => ((await storedBlob(key ?? '')) === null ? true : undefined));
  t.is((await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live })).status, 200);
  const page = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
  t.is(page.status, 410);
  t.is(page.body.error.reason, 'revoked');
});

test('expiry ends the transfer at expires_at and destroys its content', async (t) => {
  const data = content(10 * 1024);
  const created = await createTransfer(api, ws.keys.live, {
    // Long enough to upload and scan on a loaded machine: the upload deadline is never past the expiry.
    expires_in_hours: 20 / 3600,
    files: [{ name: 'brief.bin', size: data.length }],
  });
  await put(created.upload_urls[0]?.url ?? '', data);
  const expired = await waitForTransfer(
    api,
    ws.keys.live,
    created.transfer.id,
    (tr) => tr.status === 'expired',
    30_000,
  );
  t.is(expired.status_reason, 'expired');
  const [key] = await objectKeys(created.transfer.id);
  await eventually(async () => ((await storedBlob(key ?? '')) === null ? true : undefined));
  const files = await createTransferQueries(api.services.db).files(created.transfer.id);
  t.is(files[0]?.data_key_wrapped, null);
  const refused = await links(api, created.transfer.short_code);
  t.is(refused.status, 410);
  t.is(refused.body.error.reason, 'expired');
});
