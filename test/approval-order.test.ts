import type { Client } from '@temporalio/client';
import test from 'ava';
import { connectTemporal } from '../lib/temporal.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { mailsTo, uniqueAddress, waitForMail } from './helpers/mail.ts';
import { content, createTransfer, links, put, waitForTransfer } from './helpers/transfers.ts';

// An approval decision stands whenever it is taken: before the files are
// uploaded, while they are scanned, or once the transfer is active. Each order
// runs through the real API and worker, for both decisions, and checks what
// the API says, whether downloads work, and who was mailed what.

const MiB = 1024 * 1024;
// Big enough that its scan (decryption, SHA-256 and clamd) lasts well over the
// time it takes to see it scanning and decide; the test checks that it did.
const SCANNING_BYTES = 96 * MiB;

let api: TestApi;
let ws: TestWorkspace;
let owner: string;
let temporal: Client;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Approvals in any order');
  owner = (await api.call('GET', '/v1/me', { key: ws.keys.live })).body.user.email;
  temporal = await connectTemporal(api.services.config);
});
test.after.always(async () => {
  await temporal?.connection.close();
  await api.close();
});

type Decision = 'approved' | 'rejected';
type Moment = 'before upload' | 'during scan' | 'after activation';

async function decide(id: string, decision: Decision): Promise<ApiResponse> {
  const response = await api.call('POST', `/v1/transfers/${id}/approve`, {
    key: ws.keys.live,
    body: { decision, note: `${decision} by the test` },
  });
  if (response.status !== 200) throw new Error(`approve failed: ${response.status} ${response.text}`);
  return response;
}

/** Ends the transfer and waits for its workflow to finish: from then on, nothing more can be mailed. */
async function settle(id: string) {
  await api.call('DELETE', `/v1/transfers/${id}`, { key: ws.keys.live });
  await temporal.workflow.getHandle(`transfer-${id}`).result();
}

for (const moment of ['before upload', 'during scan', 'after activation'] as const satisfies readonly Moment[]) {
  for (const decision of ['approved', 'rejected'] as const) {
    test(`${decision} ${moment}: the decision stands once active, downloads follow it, the owner is told and the recipient mailed only if approved`, async (t) => {
      const recipient = uniqueAddress(`recipient-${decision}`);
      const title = `${decision} ${moment} ${recipient}`;
      const bytes = content(moment === 'during scan' ? SCANNING_BYTES : 4096);
      const created = await createTransfer(api, ws.keys.live, {
        files: [{ name: 'file.bin', size: bytes.length }],
        approval_required: true,
        recipient,
        transfer_title: title,
      });
      const id = created.transfer.id;
      const initial = await api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live });
      t.is(initial.body.approval_status, 'pending', 'a transfer that needs approval is pending from its creation');

      let decided: ApiResponse | undefined;
      if (moment === 'before upload') decided = await decide(id, decision);
      const uploaded = await put(created.upload_urls[0]?.url ?? '', bytes);
      t.is(uploaded.status, 200);
      if (moment === 'during scan') {
        await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status_reason === 'scanning' || tr.status === 'active');
        decided = await decide(id, decision);
      }
      const active = await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status === 'active', 120_000);
      if (moment === 'after activation') {
        // As an approver would: asked first (the transfer became active undecided), then deciding.
        await waitForMail(owner, new RegExp(`^Approval needed: “${escapeRegExp(title)}”$`), 60_000);
        decided = await decide(id, decision);
      }

      // Where the transfer stood when the decision was taken (the approve response is that row).
      const expectedState = {
        'before upload': ['scanning', 'uploading'],
        'during scan': ['scanning', 'scanning'],
        'after activation': ['active', null],
      }[moment];
      t.deepEqual([decided?.body.status, decided?.body.status_reason], expectedState, 'decided at the intended moment');
      t.is(decided?.body.approval_status, decision);

      // The decision is what the API reports from then on.
      const now = await eventually(async () => {
        const response = await api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live });
        return response.body.status === 'active' ? response.body : undefined;
      });
      t.is(active.status, 'active');
      t.is(now.approval_status, decision);
      t.is(now.approval_note, `${decision} by the test`);
      t.is(now.approved_by, ws.user_id);
      if (decision === 'approved') t.truthy(now.approved_at);
      else t.is(now.approved_at, null);

      // Downloads follow the decision.
      const issued = await links(api, created.transfer.short_code);
      if (decision === 'approved') t.is(issued.status, 200, issued.text);
      else {
        t.is(issued.status, 403);
        t.is(issued.body.error.reason, 'rejected');
      }
      const view = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
      t.is(view.body.available, decision === 'approved');

      // The owner is told the decision; the recipient gets the link only when approved.
      const told = await waitForMail(owner, new RegExp(`^Transfer ${decision}: “${escapeRegExp(title)}”$`), 60_000);
      t.truthy(told);
      if (decision === 'approved') {
        const link = await waitForMail(recipient, /.+/, 60_000);
        // The recipient's personal link to the transfer (docs/recipients.md).
        const personal = new URL(initial.body.recipients[0].share_url).pathname;
        t.true(link.text.includes(personal));
      }
      await settle(id);
      const toRecipient = await mailsTo(recipient);
      t.is(toRecipient.length, decision === 'approved' ? 1 : 0, 'one link mail if approved, none if rejected');
      const toOwner = (await mailsTo(owner)).filter((mail) => mail.subject.includes(`“${title}”`));
      t.is(toOwner.filter((mail) => mail.subject.startsWith('Transfer ')).length, 1, 'one decision mail');
      t.is(
        toOwner.filter((mail) => mail.subject.startsWith('Approval needed')).length,
        moment === 'after activation' ? 1 : 0,
        'approval is requested only of a transfer that is pending when it becomes active',
      );
    });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
