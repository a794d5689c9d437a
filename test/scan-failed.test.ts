import { randomUUID } from 'node:crypto';
import test from 'ava';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { createWorkspaceQueries } from '../lib/db/queries/workspaces.ts';
import { eventually, startApi, type TestApi } from './helpers/api.ts';
import { waitForMail } from './helpers/mail.ts';
import { kill, startWorker } from './helpers/processes.ts';
import { storedFor } from './helpers/storage.ts';
import { content, createTransfer, put, waitForTransfer } from './helpers/transfers.ts';
import { alterRecordedChecksums, alterStoredBytes } from './helpers/unverifiable.ts';

// A file whose scan fails for good (its content no longer matches its upload)
// ends its transfer: deleted as `scan_failed`, objects gone, the event recorded,
// the owner mailed, the share link 410. The bytes are altered while no worker
// polls the transfer's task queue, then a worker is started: the scan sees them.

const cases = [
  { what: 'stored ciphertext altered after upload', alter: alterStoredBytes, failure: 'content_corrupt' },
  {
    what: 'upload checksum that the content no longer matches',
    alter: alterRecordedChecksums,
    failure: 'checksum_mismatch',
  },
] as const;

for (const { what, alter, failure } of cases) {
  test.serial(`a transfer whose file fails its scan for good ends as scan_failed (${what})`, async (t) => {
    const taskQueue = `scan-failed-${randomUUID()}`;
    const api: TestApi = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
    t.teardown(() => api.close());
    const ws = await api.workspace('Scan failed');
    const data = content(200 * 1024);
    const created = await createTransfer(api, ws.keys.live, {
      transfer_title: 'Quarterly figures',
      recipient: `recipient-${randomUUID()}@valise.test`,
      files: [{ name: 'figures.bin', size: data.length }],
    });
    const id = created.transfer.id;
    t.is((await put(created.upload_urls[0]?.url ?? '', data)).status, 200);
    t.is((await storedFor(api, id)).objects.length, 1, 'the upload is stored');
    await alter(api, id);

    const worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
    t.teardown(() => kill(worker));
    const ended = await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status !== 'scanning', 90_000);
    t.like(ended, { status: 'deleted', status_reason: 'scan_failed' });

    // Its objects are deleted with it (the workflow deletes them right after the end).
    const stored = await eventually(async () => {
      const now = await storedFor(api, id);
      return now.objects.length === 0 && now.uploads.length === 0 ? now : undefined;
    });
    t.deepEqual(stored, { objects: [], uploads: [] });
    const [file] = await createTransferQueries(api.services.db).files(id);
    t.is(file?.data_key_wrapped, null, 'its key is destroyed');

    const events = await createEventQueries(api.services.db).listByType(
      { workspaceId: ws.workspace_id, environment: 'live' },
      'transfer.scan_failed',
    );
    t.is(events.length, 1);
    t.like(events[0]?.data, { transfer: { id, status: 'deleted' }, file_id: file?.id, failure });

    const owner = await createWorkspaceQueries(api.services.db).findUser(ws.workspace_id, ws.user_id);
    const mail = await waitForMail(owner?.email ?? '', /Transfer removed: “Quarterly figures”/, 60_000);
    t.regex(mail.text, /figures\.bin/);

    const share = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
    t.is(share.status, 410);
    t.is(share.body.error.reason, 'scan_failed');
  });
}
