import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { createTransferQueries } from '../../lib/db/queries/transfers.ts';
import { fileKey, linkKeyFrom } from '../../sdk/src/crypto/link-key.ts';
import {
  createDecryptStream,
  InvalidArgumentError,
  SendInterruptedError,
  type SendResult,
  Valise,
} from '../../sdk/src/index.ts';
import { fileFromPath, toDirectory } from '../../sdk/src/node.ts';
import { eventually } from '../helpers/api.ts';
import { content, waitForTransfer } from '../helpers/transfers.ts';
import { sdkSession } from './session.ts';

// transfers.send and transfers.download against the real stack (API, worker, MinIO).

const MiB = 1024 * 1024;
const MARKER = 'VALISE-PLAINTEXT-MARKER';

const sdk = sdkSession('SDK transfers');

async function onDisk(name: string, bytes: Uint8Array) {
  const path = join(sdk.dir, name);
  await writeFile(path, bytes);
  return path;
}

async function storedBlob(transferId: string, index: number): Promise<Buffer> {
  const files = await createTransferQueries(sdk.api.services.db).files(transferId);
  const key = files[index]?.object_key;
  if (!key) throw new Error('no object key');
  const chunks: Buffer[] = [];
  for await (const chunk of await sdk.api.services.objects.read(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function downloadAll(shareUrl: string, into: string) {
  const result = await sdk.valise.transfers.download(shareUrl, { to: toDirectory(into) });
  return result;
}

const active = (sent: SendResult) =>
  waitForTransfer(sdk.api, sdk.ws.keys.live, sent.transfer.id, (transfer) => transfer.status === 'active');

for (const mode of ['server', 'e2e'] as const) {
  test(`send and download round-trip byte-identical in ${mode} mode, from disk and from a Blob`, async (t) => {
    const big = content(3 * MiB + 17, MARKER);
    const small = content(70_000, MARKER);
    const progress: number[] = [];
    const sent = await sdk.valise.transfers.send({
      mode,
      transfer_title: `SDK ${mode}`,
      files: [
        await fileFromPath(await onDisk(`${mode}-big.bin`, big)),
        { blob: new Blob([new Uint8Array(small)]), name: 'small.bin' },
      ],
      onProgress: (p) => progress.push(p.bytesUploaded),
    });
    t.is(
      progress.at(-1),
      sent.session.files.reduce((sum, f) => sum + f.storedSize, 0),
    );
    const transfer = await active(sent);
    const out = join(sdk.dir, `${mode}-out`);
    const downloaded = await downloadAll(sent.shareUrl, out);
    t.deepEqual(
      downloaded.files.map((f) => f.bytes),
      [big.length, small.length],
    );
    t.true((await readFile(join(out, `${mode}-big.bin`))).equals(big));
    t.true((await readFile(join(out, 'small.bin'))).equals(small));

    const stored = await storedBlob(sent.transfer.id, 0);
    // Not vacuous: the stored object is the whole file (ciphertext is never shorter than the plaintext).
    t.true(stored.length >= big.length, `the stored object holds the file (${stored.length} bytes)`);
    t.false(stored.includes(MARKER), 'storage holds ciphertext only');
    if (mode === 'e2e') {
      t.is(transfer.scan_status, 'not_scanned_e2e');
      const url = new URL(sent.shareUrl);
      t.regex(url.hash, /^#k=[A-Za-z0-9_-]{43}$/);
      t.false(sent.transfer.share_url.includes('#'), 'the server-side link has no key');
      // The stored object is exactly the client's VAL1 blob: the link key (never sent) opens it.
      const linkKey = linkKeyFrom(sent.shareUrl);
      if (!linkKey) throw new Error('no key');
      const key = await fileKey(linkKey, sent.session.files[0]?.fileId ?? '', 2);
      const plain = await new Response(
        new Blob([new Uint8Array(stored)]).stream().pipeThrough(createDecryptStream({ key, blobSize: stored.length })),
      ).arrayBuffer();
      t.true(Buffer.from(plain).equals(big));
      const apiSide = await sdk.valise.transfers.get(sent.transfer.id);
      t.false(JSON.stringify(apiSide).includes(url.hash.slice(3)), 'the key is nowhere in what the server knows');
    }
  });

  test(`an upload interrupted midway resumes and sends only the missing bytes (${mode} mode)`, async (t) => {
    const bytes = content(20 * MiB + 333, MARKER);
    const path = await onDisk(`${mode}-resume.bin`, bytes);
    const controller = new AbortController();
    const error = await t.throwsAsync(
      sdk.valise.transfers.send({
        mode,
        files: [await fileFromPath(path)],
        signal: controller.signal,
        onProgress: (p) => {
          if (p.bytesSentThisCall >= 13 * MiB) controller.abort();
        },
      }),
      { instanceOf: SendInterruptedError },
    );
    const session = (error as SendInterruptedError).session;
    t.is(error?.code, 'aborted');
    // A JSON round trip: a session can be saved and resumed by another process.
    const saved = JSON.parse(JSON.stringify(session));
    const file = saved.files[0];
    // Whole 8 MiB parts are kept: the last one is committed once the server notices the cut
    // connection, so wait for at least one (failing after 10 s if none ever is).
    const stored = await eventually(async () => {
      const offset = await sdk.valise.uploads.offset(file.url);
      return offset >= 8 * MiB ? offset : undefined;
    }, 10_000);
    t.true(stored < file.storedSize);

    let sentByResume = 0;
    const resumed = await sdk.valise.transfers.resume(saved, {
      files: [await fileFromPath(path)],
      onProgress: (p) => {
        sentByResume = p.bytesSentThisCall;
      },
    });
    t.is(sentByResume, file.storedSize - stored, 'only the missing bytes were sent');
    await active(resumed);
    const out = join(sdk.dir, `${mode}-resume-out`);
    await downloadAll(resumed.shareUrl, out);
    t.true((await readFile(join(out, `${mode}-resume.bin`))).equals(bytes));
  });
}

for (const mode of ['server', 'e2e'] as const) {
  test(`with uploadChunkBytes each file goes as part-sized PUTs, and a lost chunk is resent alone (${mode} mode)`, async (t) => {
    const bytes = content(17 * MiB + 5, MARKER);
    const puts: string[] = [];
    let failed = false;
    // A fetch that loses the second chunk once, the way a dropped connection would.
    const flaky: typeof fetch = async (input, init) => {
      if (init?.method === 'PUT') {
        const range = new Headers(init.headers).get('content-range') ?? 'whole';
        puts.push(range);
        if (puts.length === 2 && !failed) {
          failed = true;
          throw new TypeError('fetch failed');
        }
      }
      return fetch(input, init);
    };
    const chunked = new Valise({
      apiKey: sdk.ws.keys.live,
      baseUrl: sdk.api.url,
      uploadChunkBytes: 8 * MiB,
      fetch: flaky,
    });
    const sent = await chunked.transfers.send({
      mode,
      files: [{ blob: new Blob([new Uint8Array(bytes)]), name: `${mode}-chunked.bin` }],
    });
    const size = sent.session.files[0]?.storedSize ?? 0;
    const chunk = (start: number, end: number) => `bytes ${start}-${end - 1}/${size}`;
    t.deepEqual(puts, [chunk(0, 8 * MiB), chunk(8 * MiB, 16 * MiB), chunk(8 * MiB, 16 * MiB), chunk(16 * MiB, size)]);
    await active(sent);
    const out = join(sdk.dir, `${mode}-chunked-out`);
    await downloadAll(sent.shareUrl, out);
    t.true((await readFile(join(out, `${mode}-chunked.bin`))).equals(bytes));
  });
}

for (const mode of ['server', 'e2e'] as const) {
  test(`a download whose connection drops goes on from where it broke off, as one counted download (${mode} mode)`, async (t) => {
    const bytes = content(5 * MiB + 77, MARKER);
    const sent = await sdk.valise.transfers.send({
      mode,
      files: [{ blob: new Blob([new Uint8Array(bytes)]), name: 'cut.bin' }],
    });
    await active(sent);
    const ranges: Array<string | null> = [];
    let cut = false;
    // The first download of the file breaks off after about 2 MiB, the way a dropped connection does.
    const cutting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).includes('/v1/downloads/') || !response.body) return response;
      ranges.push(new Headers(init?.headers).get('range'));
      if (cut) return response;
      cut = true;
      let passed = 0;
      const broken = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            if (passed + chunk.length > 2 * MiB) return controller.error(new TypeError('terminated'));
            passed += chunk.length;
            controller.enqueue(chunk);
          },
        }),
      );
      return new Response(broken, { status: response.status, headers: response.headers });
    };
    const reader = new Valise({ baseUrl: sdk.api.url, fetch: cutting });
    const out = join(sdk.dir, `${mode}-cut-out`);
    const result = await reader.transfers.download(sent.shareUrl, { to: toDirectory(out) });
    t.is(result.files[0]?.bytes, bytes.length);
    t.true((await readFile(join(out, 'cut.bin'))).equals(bytes));
    t.is(ranges.length, 2);
    t.is(ranges[0], null);
    t.regex(ranges[1] ?? '', /^bytes=\d+-$/);
    const resumedAt = Number(/\d+/.exec(ranges[1] ?? '')?.[0]);
    t.true(resumedAt > 0 && resumedAt <= 2 * MiB, `resumed at ${resumedAt}`);
    t.is((await sdk.valise.transfers.get(sent.transfer.id)).total_downloads, 1);
  });
}

test('uploadChunkBytes must be a multiple of the 8 MiB part size', (t) => {
  const error = t.throws(() => new Valise({ baseUrl: sdk.api.url, uploadChunkBytes: 5 * MiB }), {
    instanceOf: InvalidArgumentError,
  });
  t.is(error?.param, 'uploadChunkBytes');
  t.notThrows(() => new Valise({ baseUrl: sdk.api.url, uploadChunkBytes: 16 * MiB }));
});

test('downloading an e2e link without its key fragment fails clearly', async (t) => {
  const sent = await sdk.valise.transfers.send({
    mode: 'e2e',
    files: [{ blob: new Blob([new Uint8Array(content(5000))]), name: 'x.bin' }],
  });
  await active(sent);
  const withoutKey = sent.shareUrl.split('#')[0] ?? '';
  const error = await t.throwsAsync(
    sdk.valise.transfers.download(withoutKey, { to: toDirectory(join(sdk.dir, 'nokey')) }),
  );
  t.regex(error?.message ?? '', /no `#k=` key/);
});
