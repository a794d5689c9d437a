import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import test, { type ExecutionContext } from 'ava';
import type { createTransferActivities } from '../../activities/transfers.ts';
import {
  approvalDecidedSignal,
  revokedSignal,
  transferLifecycle,
  transferWorkflowId,
} from '../../workflows/transferLifecycle.ts';
import { type SharedWorker, startSharedWorker, untilCalled } from './workflows.ts';

// transferLifecycle's tests (test/workflows/transfer-*.test.ts) share one stub
// of its activities over an in-memory transfer, and the moves they make on it.

export type TransferActivities = ReturnType<typeof createTransferActivities>;
export type Approval = Awaited<ReturnType<TransferActivities['approvalState']>>;
export type Lifecycle = WorkflowHandle<typeof transferLifecycle>;

export type StubOptions = {
  files?: string[];
  /** Files already uploaded when the workflow first looks. */
  uploaded?: string[];
  uploadDeadlineInMs?: number;
  expiresInMs?: number;
  approvalRequired?: boolean;
  approval?: Approval;
  recipient?: string | null;
  recheckMs?: number;
  /** Files stored whole whose signal was lost: only the workflow's re-read of its uploads finds them. */
  storedWithoutSignal?: string[];
  /** How often the workflow re-reads its uploads while it waits (UPLOAD_RECHECK); an hour unless said. */
  uploadRecheckMs?: number;
  scanOutcome?: 'active' | 'infected' | 'ended';
  /** Files scanned at once (SCANS_PER_TRANSFER); 2 unless said. */
  scansInParallel?: number;
  /** scanFile waits for releaseScan(). */
  holdScan?: boolean;
  /** The first look fails this many times, as when it comes before the creating transaction commits. */
  invisibleFor?: number;
  /** The recipient's mail fails for good (a mailbox that does not exist). */
  recipientMailFails?: boolean;
  /** This file's scan fails for good (a checksum mismatch: non-retryable). */
  scanFailsForGood?: string;
};

/**
 * Stub activities over one in-memory transfer: `state.approval` is the
 * persisted decision, `state.calls` what the workflow asked for, in order, and
 * `state.at` when each call came. The deadlines count from the workflow's
 * first look (a worker may take seconds to start on a busy machine).
 */
export function stubTransfer(options: StubOptions = {}) {
  const files = options.files ?? ['file-1'];
  const deadlines = { uploadDeadline: Number.NaN, expiresAt: Number.NaN };
  const state = {
    approval: options.approval ?? ('pending' as Approval),
    calls: [] as string[],
    at: [] as number[],
    /** Files whose scan has started, in order, and the most scans that ran at once. */
    scanStarts: [] as string[],
    mostScansAtOnce: 0,
  };
  let scansNow = 0;
  const record = (call: string) => {
    state.calls.push(call);
    state.at.push(Date.now());
  };
  let releaseScan!: () => void;
  const scanReleased = new Promise<void>((resolve) => {
    releaseScan = resolve;
  });
  if (!options.holdScan) releaseScan();
  let scanStarted!: () => void;
  const scanning = new Promise<void>((resolve) => {
    scanStarted = resolve;
  });
  let invisible = options.invisibleFor ?? 0;
  const activities: TransferActivities = {
    loadTransferPlan: async () => {
      if (invisible-- > 0) {
        record('loadTransferPlan:not-visible');
        throw ApplicationFailure.retryable('not visible yet', 'NotVisibleYet');
      }
      if (Number.isNaN(deadlines.expiresAt)) {
        deadlines.uploadDeadline = Date.now() + (options.uploadDeadlineInMs ?? 3_600_000);
        deadlines.expiresAt = Date.now() + (options.expiresInMs ?? 3_600_000);
      }
      return {
        fileIds: files,
        uploadedFileIds: options.uploaded ?? files,
        uploadDeadline: new Date(deadlines.uploadDeadline).toISOString(),
        expiresAt: new Date(deadlines.expiresAt).toISOString(),
        approvalRequired: options.approvalRequired ?? false,
        approvalStatus: options.approvalRequired ? state.approval : null,
        approvalRecheckMs: options.recheckMs ?? 3_600_000,
        uploadRecheckMs: options.uploadRecheckMs ?? 3_600_000,
        recipient: options.recipient === undefined ? 'recipient@valise.test' : options.recipient,
        scansInParallel: options.scansInParallel ?? 2,
      };
    },
    uploadedFileIds: async () => {
      record('uploadedFileIds');
      return [...(options.uploaded ?? files), ...(options.storedWithoutSignal ?? [])];
    },
    approvalState: async () => {
      record(`approvalState:${state.approval}`);
      return state.approval;
    },
    beginScan: async () => record('beginScan'),
    scanFile: async (fileId) => {
      state.scanStarts.push(fileId);
      state.mostScansAtOnce = Math.max(state.mostScansAtOnce, ++scansNow);
      scanStarted();
      // A scan that a failed test never released gives way when the worker shuts down.
      await Promise.race([scanReleased, Context.current().cancelled]);
      scansNow--;
      record(`scanFile:${fileId}`);
      if (fileId === options.scanFailsForGood) {
        throw ApplicationFailure.nonRetryable(`file ${fileId} does not match its upload checksum`, 'ChecksumMismatch');
      }
      return 'clean' as const;
    },
    settleScan: async () => {
      record('settleScan');
      return options.scanOutcome ?? 'active';
    },
    endTransfer: async (_id, status, reason) => record(`endTransfer:${status}:${reason}`),
    failScan: async (_id, fileId, failureType) => record(`failScan:${fileId}:${failureType}`),
    notifyScanFailed: async (_id, fileId) => record(`notifyScanFailed:${fileId}`),
    requestApproval: async () => record('requestApproval'),
    notifyApprovalDecision: async () => record(`notifyApprovalDecision:${state.approval}`),
    notifyRecipient: async () => {
      record('notifyRecipient');
      if (options.recipientMailFails) {
        throw ApplicationFailure.nonRetryable('550 no such mailbox', 'MailRejected');
      }
    },
  };
  const atOf = (call: string) => state.at[state.calls.indexOf(call)] ?? Number.NaN;
  /** Waits until the workflow has asked for `call`. */
  const until = (call: string) => untilCalled(state.calls, (calls) => calls.includes(call), call);
  /** Records a decision as the API does, and signals it unless `signal` is false (a signal lost). */
  const decide = async (handle: Lifecycle, decision: 'approved' | 'rejected', signal = true) => {
    state.approval = decision;
    if (signal) await handle.signal(approvalDecidedSignal, decision);
  };
  return { state, activities, scanning, releaseScan, deadlines, atOf, until, decide };
}

/** A test's workflows reach its stub by their workflow ids; the file's one worker routes them. */
const stubsByWorkflowId = new Map<string, TransferActivities>();

/** The activities of the file's one worker: each call goes to the stub of the workflow that made it. */
function routedActivities(): TransferActivities {
  const names = Object.keys(stubTransfer().activities) as (keyof TransferActivities)[];
  const route =
    (name: keyof TransferActivities) =>
    (...args: unknown[]): Promise<unknown> => {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      const stub = stubsByWorkflowId.get(workflowId);
      if (!stub) throw ApplicationFailure.nonRetryable(`no stub for ${workflowId}: its test is over`, 'NoStub');
      return (stub[name] as (...args: unknown[]) => Promise<unknown>)(...args);
    };
  return Object.fromEntries(names.map((name) => [name, route(name)])) as unknown as TransferActivities;
}

let fileWorker: Promise<SharedWorker> | undefined;
test.after.always(async () => {
  await fileWorker?.then(
    (worker) => worker.stop(),
    () => {}, // a worker that never started failed its tests already
  );
});

/**
 * Runs `run` with a `start` that starts transferLifecycle on `activities`. Every test of a file
 * shares one worker (its workflows bundled once), stopped after the file: a worker per test meant
 * two dozen workflow sandboxes loading at once beside another file's tests.
 */
export async function withLifecycleWorker(
  activities: TransferActivities,
  run: (start: () => Promise<Lifecycle>) => Promise<void>,
) {
  fileWorker ??= startSharedWorker(routedActivities());
  const { client, taskQueue, failed } = await fileWorker;
  const started: string[] = [];
  const start = () => {
    const transferId = randomUUID();
    const workflowId = transferWorkflowId(transferId);
    stubsByWorkflowId.set(workflowId, activities);
    started.push(workflowId);
    return client.workflow.start(transferLifecycle, {
      taskQueue,
      workflowId,
      args: [{ transferId }],
      // A workflow that hangs fails the test instead of holding it to ava's timeout.
      workflowExecutionTimeout: '1 minute',
    });
  };
  try {
    await Promise.race([run(start), failed]);
  } finally {
    for (const workflowId of started) stubsByWorkflowId.delete(workflowId);
  }
}

/** Starts the workflow on `stub`'s activities, left alone, and returns how it ended. */
export async function runAlone(stub: { activities: TransferActivities }): Promise<string> {
  let result = '';
  await withLifecycleWorker(stub.activities, async (start) => {
    result = await (await start()).result();
  });
  return result;
}

/**
 * `calls` with each run of consecutive scanFile calls sorted: files scanned side by side finish in
 * any order.
 */
export function scansSorted(calls: string[]): string[] {
  const out: string[] = [];
  let run: string[] = [];
  for (const call of [...calls, '']) {
    if (call.startsWith('scanFile:')) {
      run.push(call);
      continue;
    }
    out.push(...run.sort());
    run = [];
    if (call) out.push(call);
  }
  return out;
}

/** The calls of a scan that went through: every file, once, in order. */
export const scanned = (...files: string[]) => ['beginScan', ...files.map((file) => `scanFile:${file}`), 'settleScan'];

/** The mails the workflow asked for, in order. */
export const mails = (calls: string[]) => calls.filter((c) => c.startsWith('notify') || c === 'requestApproval');

/** Whether `then` was called after `first`. */
export const after = (calls: string[], first: string, then: string) =>
  calls.includes(first) && calls.indexOf(then, calls.indexOf(first)) > calls.indexOf(first);

/** Revokes the transfer and checks the workflow ends as revoked: how most tests stop theirs. */
export async function revokeAndEnd(t: ExecutionContext, handle: Lifecycle) {
  await handle.signal(revokedSignal);
  t.is(await handle.result(), 'revoked');
}

/** Signalling a workflow that has completed is refused: nothing is left to change. */
export async function refused(t: ExecutionContext, signalling: Promise<void>) {
  const error = await t.throwsAsync(signalling);
  t.regex(error?.message ?? '', /completed|not found/i);
}
