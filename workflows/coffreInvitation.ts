import { proxyActivities } from '@temporalio/workflow';
import type { createCoffreActivities } from '../activities/coffres.ts';
import { MAIL_RETRY } from './retry-policies.ts';
import { bestEffort } from './waiting.ts';

type Activities = ReturnType<typeof createCoffreActivities>;

const mail = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: MAIL_RETRY });

/** `coffreInvitation`: one per invitation issued (a member's nonce changes with each). */
export const coffreInvitationWorkflowId = (memberId: string, nonce: string) => `coffre-invitation-${memberId}-${nonce}`;

/**
 * Mails one vault invitation (workflow id `coffre-invitation-<memberId>-<nonce>`). The link is
 * signed again by the activity from the member's row: no credential is written to the history.
 */
export async function coffreInvitation(input: { memberId: string; nonce: string }): Promise<string> {
  let sent = true;
  await bestEffort(async () => {
    try {
      await mail.sendCoffreInvitation(input.memberId, input.nonce);
    } catch (error) {
      sent = false;
      throw error;
    }
  });
  return sent ? 'sent' : 'not_sent';
}
