import {
  Client,
  type ClientInterceptors,
  Connection,
  ScheduleAlreadyRunning,
  type ScheduleOptions,
  ScheduleOverlapPolicy,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, sandboxPurgeScheduleId, sandboxPurgeWorkflowId } from '../workflows/ids.ts';
import { type PurgeSandboxInput, purgeSandbox } from '../workflows/purgeSandbox.ts';
import {
  type RewrapDataKeysInput,
  type RewrapProgress,
  rewrapDataKeys,
  rewrapDataKeysWorkflowId,
  rewrapProgressQuery,
} from '../workflows/rewrapDataKeys.ts';
import type { Config } from './config.ts';
import { workflowLabels } from './temporal-search-attributes.ts';

// The Temporal client's side shared by every family: the connection, idempotent starts, and the
// `sandbox-purge` schedule. Each family's adapter (starts and signals of its workflows) lives in
// its folder, lib/<family>/temporal.ts, and lib/family-workflows.ts lists them.

/** What a family's workflow adapter is built from: the process's client and the task queue its workers poll. */
export type WorkflowStarter = { client: Client; taskQueue: string };

/** `interceptors`: the tracing ones when traces are exported (lib/observability/tracing.ts). */
export async function connectTemporal(config: Config, interceptors: ClientInterceptors = {}): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace, interceptors });
}

/** Resolves once the workflow is started, or found started already under its id. */
export async function startedOnce(starting: Promise<unknown>): Promise<void> {
  try {
    await starting;
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/**
 * Creates the `sandbox-purge` schedule (workflows/ids.ts), or brings an existing one to this
 * worker's interval and task queue: every worker calls it at start, so whichever starts first
 * creates it and the others find it. A firing while the last run still purges is skipped.
 * Answers the schedule's id.
 */
export async function ensureSandboxPurgeSchedule(
  client: Client,
  config: Pick<Config, 'temporal' | 'sandboxPurge'>,
): Promise<string> {
  const scheduleId = sandboxPurgeScheduleId(config.temporal.taskQueue);
  const options = {
    scheduleId,
    spec: { intervals: [{ every: config.sandboxPurge.intervalMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: purgeSandbox,
      workflowId: sandboxPurgeWorkflowId(scheduleId),
      taskQueue: config.temporal.taskQueue,
      args: [{}] as [PurgeSandboxInput],
      ...workflowLabels(null, 'sandbox_purge', scheduleId),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  } satisfies ScheduleOptions;
  try {
    await client.schedule.create(options);
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(scheduleId).update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: { ...previous.policies, ...options.policies },
    }));
  }
  return scheduleId;
}

/**
 * Deletes the schedule `ensureSandboxPurgeSchedule` made for a task queue other than the default
 * one, when its worker stops: a test run's schedule would otherwise fire for ever at a queue no
 * one polls. The default queue's schedule stays, for the next worker.
 */
export async function dropTestSandboxPurgeSchedule(client: Client, config: Pick<Config, 'temporal'>): Promise<void> {
  const scheduleId = sandboxPurgeScheduleId(config.temporal.taskQueue);
  if (scheduleId === sandboxPurgeScheduleId(DEFAULT_TASK_QUEUE)) return;
  await client.schedule
    .getHandle(scheduleId)
    .delete()
    .catch(() => undefined);
}

/**
 * Starts the master-key rotation to `input.targetKeyId` (workflows/rewrapDataKeys.ts), or finds the
 * one already running for that key; a workflow of the deployment, not of a tenant. Answers its id.
 */
export async function startKeyRotation(
  { client, taskQueue }: WorkflowStarter,
  input: RewrapDataKeysInput,
): Promise<string> {
  const workflowId = rewrapDataKeysWorkflowId(input.targetKeyId);
  await startedOnce(
    client.workflow.start(rewrapDataKeys, {
      taskQueue,
      workflowId,
      ...workflowLabels(null, 'master_key', input.targetKeyId),
      args: [input],
    }),
  );
  return workflowId;
}

export type { RewrapProgress };

/** A master-key rotation as Temporal knows it: its status, and its counts (running: while a worker answers). */
export type KeyRotationState = { workflowId: string; status: string; progress: RewrapProgress | null };

/** The rotation to `targetKeyId`, or null when none was ever started. */
export async function keyRotationState(client: Client, targetKeyId: string): Promise<KeyRotationState | null> {
  const handle = client.workflow.getHandle<typeof rewrapDataKeys>(rewrapDataKeysWorkflowId(targetKeyId));
  try {
    const status = (await handle.describe()).status.name;
    const progress =
      status === 'COMPLETED'
        ? await handle.result()
        : status === 'RUNNING'
          ? await handle.query(rewrapProgressQuery).catch(() => null)
          : null;
    return { workflowId: handle.workflowId, status, progress };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

/** Waits for the rotation to `targetKeyId` to end, and answers its counts. */
export function keyRotationResult(client: Client, targetKeyId: string): Promise<RewrapProgress> {
  return client.workflow.getHandle<typeof rewrapDataKeys>(rewrapDataKeysWorkflowId(targetKeyId)).result();
}
