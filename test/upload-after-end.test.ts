import type { Client } from '@temporalio/client';
import type { ExecutionContext } from 'ava';
import test from 'ava';
import { signToken } from '../lib/crypto/signed-token.ts';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { connectTemporal } from '../lib/temporal.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { storedFor } from './helpers/storage.ts';
import { content, createTransfer, EICAR, put, waitForTransfer } from './helpers/transfers.ts';

// Once a transfer has ended (revoked, expired, never fully uploaded, or
// infected) its upload URLs are dead: every PUT, HEAD and GET is refused with
// 410 and the reason, whatever the file's own state, and nothing reaches
// object storage. 410 is final for clients; a 409 would have the SDK and the
// sender page wait and retry.

let api: TestApi;
let ws: TestWorkspace;
let temporal: Client;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Uploads after the end');
  temporal = await connectTemporal(api.services.config);
});
test.after.always(async () => {
  await temporal?.connection.close();
  await api.close();
});

/** Waits for the transfer's workflow to finish: its cleanup of storage is done. */
const workflowDone = (id: string) => temporal.workflow.getHandle(`transfer-${id}`).result();

/** An upload URL for a file, signed now and valid for an hour: only the transfer's state can refuse it. */
function freshUrl(transferId: string, fileId: string): string {
  const token = signToken(
    api.services.keys.links,
    'upload',
    { f: fileId, t: transferId },
    new Date(Date.now() + 3_600_000),
  );
  return `${api.url}/v1/uploads/${token}`;
}

async function assertRefused(
  t: ExecutionContext,
  label: string,
  url: string,
  bytes: Buffer,
  reason: string | undefined,
): Promise<void> {
  const response = await put(url, bytes);
  t.is(response.status, 410, `PUT ${label}: ${JSON.stringify(response.body)}`);
  t.is(response.body?.error?.code, 'not_found', `PUT ${label}`);
  t.is(response.body?.error?.request_id, response.headers.get('x-request-id'), `PUT ${label}`);
  if (reason) t.is(response.body?.error?.reason, reason, `PUT ${label}`);
  const head = await fetch(url, { method: 'HEAD' });
  t.is(head.status, 410, `HEAD ${label}`);
  t.is(head.headers.get('upload-offset'), null, `HEAD ${label}`);
  const get = await fetch(url);
  t.is(get.status, 410, `GET ${label}`);
}

async function assertNothingStored(t: ExecutionContext, transferId: string, pendingFiles: string[] = []) {
  t.deepEqual(await storedFor(api, transferId), { objects: [], uploads: [] }, 'nothing in object storage');
  const files = await createTransferQueries(api.services.db).files(transferId);
  for (const file of files.filter((f) => pendingFiles.includes(f.id))) {
    t.deepEqual([file.upload_state, file.bytes_received, file.multipart_upload_id], ['pending', 0, null]);
  }
}

test('after revocation: uploaded and pending files alike are refused with 410 revoked, nothing stored', async (t) => {
  const bytes = content(4096);
  const created = await createTransfer(api, ws.keys.live, {
    files: [
      { name: 'sent.bin', size: bytes.length },
      { name: 'pending.bin', size: bytes.length },
    ],
  });
  const [sent, pending] = created.upload_urls;
  t.is((await put(sent?.url ?? '', bytes)).status, 200);
  t.is((await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live })).status, 200);
  await workflowDone(created.transfer.id);

  await assertRefused(t, 'the uploaded file', sent?.url ?? '', bytes, 'revoked');
  await assertRefused(t, 'the pending file', pending?.url ?? '', bytes, 'revoked');
  await assertRefused(t, 'the pending file, resumed', pending?.url ?? '', bytes, 'revoked');
  await assertNothingStored(t, created.transfer.id, [pending?.file_id ?? '']);
});

test('after the upload deadline: the URL has expired (410), and a fresh token is refused as upload_incomplete', async (t) => {
  const bytes = content(4096);
  const created = await createTransfer(api, ws.keys.live, {
    // The upload deadline is never past the expiry: three seconds to upload, and nothing comes.
    expires_in_hours: 3 / 3600,
    files: [{ name: 'late.bin', size: bytes.length }],
  });
  const entry = created.upload_urls[0];
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'deleted');
  await workflowDone(created.transfer.id);

  await assertRefused(t, 'the expired URL', entry?.url ?? '', bytes, undefined);
  await assertRefused(
    t,
    'a fresh token',
    freshUrl(created.transfer.id, entry?.file_id ?? ''),
    bytes,
    'upload_incomplete',
  );
  await assertNothingStored(t, created.transfer.id, [entry?.file_id ?? '']);
});

test('after expiry of an active transfer: its URL and a fresh token are refused with 410, nothing stored', async (t) => {
  const bytes = content(4096);
  const created = await createTransfer(api, ws.keys.live, {
    // Long enough to upload and scan on a loaded machine.
    expires_in_hours: 20 / 3600,
    files: [{ name: 'brief.bin', size: bytes.length }],
  });
  const entry = created.upload_urls[0];
  t.is((await put(entry?.url ?? '', bytes)).status, 200);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'expired', 90_000);
  await workflowDone(created.transfer.id);

  await assertRefused(t, 'its URL', entry?.url ?? '', bytes, undefined);
  await assertRefused(t, 'a fresh token', freshUrl(created.transfer.id, entry?.file_id ?? ''), bytes, 'expired');
  await assertNothingStored(t, created.transfer.id);
});

test('after infection: the file cannot be sent again, clean or not; 410 infected, nothing stored', async (t) => {
  const eicar = Buffer.from(EICAR);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'eicar.com', size: eicar.length }] });
  const entry = created.upload_urls[0];
  t.is((await put(entry?.url ?? '', eicar)).status, 200);
  const ended = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'deleted');
  t.is(ended.status_reason, 'infected');
  await workflowDone(created.transfer.id);

  await assertRefused(t, 'the same bytes', entry?.url ?? '', eicar, 'infected');
  await assertRefused(t, 'other bytes of the same size', entry?.url ?? '', content(eicar.length), 'infected');
  await assertNothingStored(t, created.transfer.id);
});
