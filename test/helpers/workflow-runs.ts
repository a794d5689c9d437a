import type { Client } from '@temporalio/client';
import { eventually } from './api.ts';

// What Temporal says of a workflow a fault scenario acts on: where to inject (an activity running
// on a worker), and afterwards what it took (the attempts of an activity, how many runs).

const STARTED = 2; // PENDING_ACTIVITY_STATE_STARTED

/** Once `workflowId` runs one of `activities` on a worker (started, not just scheduled): its name. */
export async function activityStarted(
  temporal: Client,
  workflowId: string,
  activities: readonly string[],
  timeoutMs = 60_000,
): Promise<string> {
  return eventually(
    async () => {
      const { raw } = await temporal.workflow.getHandle(workflowId).describe();
      const pending = (raw.pendingActivities ?? []).find(
        (candidate) => activities.includes(candidate.activityType?.name ?? '') && Number(candidate.state) === STARTED,
      );
      return pending?.activityType?.name ?? undefined;
    },
    timeoutMs,
    50,
  );
}

/**
 * For each time the workflow ran `activity`, in order, the attempt it ended on: Temporal records
 * only an activity's last attempt in the history, so `[2]` is one run that a retry finished.
 */
export async function activityAttempts(temporal: Client, workflowId: string, activity: string): Promise<number[]> {
  const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>();
  const attempts: number[] = [];
  for (const event of events) {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) scheduled.set(String(event.eventId), name);
    const started = event.activityTaskStartedEventAttributes;
    if (started && scheduled.get(String(started.scheduledEventId)) === activity) attempts.push(started.attempt ?? 1);
  }
  return attempts;
}

/** How many runs Temporal holds under `workflowId` (a workflow started twice, or continued, has more). */
export async function runsOf(temporal: Client, workflowId: string): Promise<Array<{ runId: string; status: string }>> {
  const runs: Array<{ runId: string; status: string }> = [];
  for await (const run of temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs.push({ runId: run.runId, status: run.status.name });
  }
  return runs;
}
