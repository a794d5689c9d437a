import { createHash } from 'node:crypto';
import test from 'ava';
import { connectTemporal } from '../../lib/temporal.ts';
import { eventually } from '../helpers/api.ts';
import { findClamd, startClamd } from '../helpers/clamd.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from '../helpers/transfers.ts';

// clamd down (issue #26): an API and a worker scanning with a clamd of the test's own, which is
// stopped by its pid before two transfers are uploaded, one clean and one carrying EICAR. Checked:
// while clamd is down both wait in `scanning`, their files `pending`, the scan retried (Temporal
// shows the attempts), and nothing is downloadable; once clamd is started again, by itself, the
// clean one becomes active and downloads byte for byte, the infected one ends `infected`.

const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

test('clamd down: scans wait and retry, visibly, and let nothing through; once it is back, clean is active and EICAR infected', async (t) => {
  const binary = findClamd();
  if (!binary) throw new Error('clamd is not installed: run scripts/setup.sh');
  let clamd = await startClamd(binary);
  const { port } = clamd;
  const api = await startApiAndWorker(t, { CLAMD_PORT: String(port) });
  t.teardown(() => clamd.stop());
  const ws = await api.workspace('clamd down');
  const key = ws.keys.live;

  await clamd.stop();
  t.log(`injected: clamd stopped (SIGTERM, by pid) on port ${port} before two uploads`);
  const bytes = content(200 * 1024);
  const clean = await createTransfer(api, key, { files: [{ name: 'clean.bin', size: bytes.length }] });
  const infected = await createTransfer(api, key, { files: [{ name: 'eicar.com', size: EICAR.length }] });
  t.is((await put(clean.upload_urls[0]?.url ?? '', bytes)).status, 200);
  t.is((await put(infected.upload_urls[0]?.url ?? '', Buffer.from(EICAR))).status, 200);

  // The scan is retried while clamd is down: Temporal shows a second attempt and its failure.
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  for (const created of [clean, infected]) {
    const retried = await eventually(async () => {
      const { raw } = await temporal.workflow.getHandle(`transfer-${created.transfer.id}`).describe();
      const scan = (raw.pendingActivities ?? []).find((activity) => activity.activityType?.name === 'scanFile');
      return scan && Number(scan.attempt) >= 2 ? scan : undefined;
    }, 60_000);
    t.truthy(retried.lastFailure?.message, 'the failure is there to read');
    const waiting = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key });
    t.like(waiting.body, { status: 'scanning', status_reason: 'scanning', scan_status: 'pending' });
    t.is(waiting.body.files[0].scan_status, null, 'no verdict for the file');
    const refused = await links(api, created.transfer.short_code);
    t.true(refused.status >= 400 && refused.status < 500, `nothing downloadable while unscanned (${refused.status})`);
  }

  clamd = await startClamd(binary, port);
  t.log('injected: clamd started again on the same port');
  const active = await waitForTransfer(api, key, clean.transfer.id, (tr) => tr.status === 'active', 180_000);
  t.is(active.scan_status, 'clean');
  const issued = await links(api, active.short_code);
  const downloaded = await fetchBytes(issued.body.files[0].download_url);
  t.is(createHash('sha256').update(downloaded.bytes).digest('hex'), createHash('sha256').update(bytes).digest('hex'));
  const ended = await waitForTransfer(api, key, infected.transfer.id, (tr) => tr.status === 'deleted', 180_000);
  t.like(ended, { scan_status: 'infected', status_reason: 'infected' });
  t.true((await links(api, infected.transfer.short_code)).status >= 400);
  t.log(
    'checked: both waited in scanning with retried scans and no link; then clean active and identical, EICAR infected',
  );
});
