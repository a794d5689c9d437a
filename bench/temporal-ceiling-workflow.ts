import { proxyLocalActivities } from '@temporalio/workflow';

// bench/temporal-ceiling.ts's workflow: the shape of a webhook delivery
// (workflows/deliverWebhook.ts: one workflow task running one local activity,
// then completion) with nothing in the activity, so that what it measures is
// the Temporal server's cost per workflow and the SDK's, none of Valise's.

const { nothing } = proxyLocalActivities<{ nothing(): Promise<void> }>({ startToCloseTimeout: '1 minute' });

export async function oneLocalActivity(): Promise<void> {
  await nothing();
}
