import { createHash } from 'node:crypto';
import test from 'ava';
import { startPrivateMinio } from '../helpers/private-services.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { content, fetchBytes, links, put, waitForTransfer } from '../helpers/transfers.ts';

// MinIO's disk nearly full (issue #26): a MinIO of the test's own on a 160 MiB RAM filesystem.
// A file that fits is stored and downloads whole; one that does not fails cleanly: the client is
// answered 503 `service_unavailable` (or its connection is cut while it still sends), never a 500,
// the URL says how far the file got, and nothing of it is visible to a recipient.

test('MinIO out of disk: an upload that does not fit fails cleanly and shows nothing; one that fits is whole', async (t) => {
  if (process.getuid?.() !== 0) throw new Error('this scenario mounts a RAM filesystem: run it as root');
  const minio = await startPrivateMinio({ diskMiB: 160 });
  t.teardown(() => minio.remove());
  const api = await startApiAndWorker(t, minio.env);
  const ws = await api.workspace('MinIO disk full');
  const key = ws.keys.live;
  const create = async (name: string, size: number) => {
    const created = await api.call('POST', '/v1/transfers', { key, body: { files: [{ name, size }] } });
    t.is(created.status, 201, created.text);
    return created.body;
  };

  const small = content(24 * 1024 * 1024);
  const fits = await create('fits.bin', small.length);
  t.is((await put(fits.upload_urls[0].url, small)).status, 200);
  const active = await waitForTransfer(api, key, fits.transfer.id, (tr) => tr.status === 'active', 120_000);
  t.log('injected: a 160 MiB disk under MinIO, then a 256 MiB upload');

  const big = content(256 * 1024 * 1024);
  const tooBig = await create('too-big.bin', big.length);
  const url: string = tooBig.upload_urls[0].url;
  const answer = await put(url, big).then(
    (response) => ({ status: response.status, body: response.body as { error?: { code: string } } }),
    (error: Error) => ({ cut: error.message }),
  );
  if ('cut' in answer) t.log(`the client's connection was cut while sending: ${answer.cut}`);
  else {
    t.is(answer.status, 503, JSON.stringify(answer.body));
    t.is(answer.body.error?.code, 'service_unavailable');
  }
  const stored = (await api.call('GET', url.slice(url.indexOf('/v1/')))).body;
  t.not(stored.upload_state, 'uploaded');
  t.true(stored.upload_offset < big.length);
  const transfer = await api.call('GET', `/v1/transfers/${tooBig.transfer.id}`, { key });
  t.not(transfer.body.status, 'active');
  const refused = await links(api, transfer.body.short_code);
  t.true(refused.status >= 400 && refused.status < 500, `no link for what is not stored (${refused.status})`);

  // What was stored before stays whole.
  const issued = await links(api, active.short_code);
  const downloaded = await fetchBytes(issued.body.files[0].download_url);
  t.is(createHash('sha256').update(downloaded.bytes).digest('hex'), createHash('sha256').update(small).digest('hex'));
  t.log(
    `checked: ${'cut' in answer ? 'connection cut' : `${answer.status} service_unavailable`}; stored up to ${stored.upload_offset}; nothing visible; the earlier file whole`,
  );
});
