import test from 'ava';
import { connectTemporal } from '../../lib/temporal.ts';
import { eventually } from '../helpers/api.ts';
import { uniqueAddress } from '../helpers/mail.ts';
import { startPrivateMaildev } from '../helpers/private-services.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { content, createTransfer, put, waitForTransfer } from '../helpers/transfers.ts';

// SMTP down (issue #26): the worker mails through an SMTP server of the test's own (maildev), which
// is stopped by its pid before a transfer with a recipient is uploaded. Checked: the transfer still
// becomes active (mail is best effort and never holds a transfer back); the recipient's mail is
// retried, and arrives, once, when the SMTP server is back within the retries (docs/transfers.md).

test('SMTP down: the transfer becomes active all the same, and its mail is retried and arrives once SMTP is back', async (t) => {
  const smtp = await startPrivateMaildev();
  t.teardown(() => smtp.remove());
  const api = await startApiAndWorker(t, smtp.env);
  const ws = await api.workspace('SMTP down');

  await smtp.stop();
  t.log(`injected: the SMTP server stopped (SIGTERM, by pid) on port ${smtp.port}`);
  const recipient = uniqueAddress('smtp-down');
  const bytes = content(4096);
  const created = await createTransfer(api, ws.keys.live, {
    files: [{ name: 'mail.bin', size: bytes.length }],
    recipient,
  });
  t.is((await put(created.upload_urls[0]?.url ?? '', bytes)).status, 200);
  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active', 60_000);
  t.is(active.status, 'active', 'mail down holds no transfer back');

  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await smtp.start();
  t.log('injected: the SMTP server started again');
  const received = await eventually(async () => {
    const mails = await smtp.mailsTo(recipient);
    return mails.length > 0 ? mails : undefined;
  }, 60_000);
  // A little longer: a mail sent twice would show now.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  t.is((await smtp.mailsTo(recipient)).length, 1, 'the recipient gets one mail');
  // The history shows the mail was tried while SMTP was down: the activity that sent it was retried.
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const history = await temporal.workflow.getHandle(`transfer-${created.transfer.id}`).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, string>();
  for (const event of events) {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) scheduled.set(String(event.eventId), name);
  }
  const mailAttempts = events
    .filter((event) => event.activityTaskStartedEventAttributes)
    .filter(
      (event) =>
        scheduled.get(String(event.activityTaskStartedEventAttributes?.scheduledEventId)) === 'notifyRecipient',
    )
    .map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 0);
  t.true(Math.max(...mailAttempts) >= 2, `the mail was retried (attempts: ${mailAttempts.join(',')})`);
  t.log(`checked: active while SMTP was down; "${received[0]?.subject}" delivered once after it came back`);
});
