import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createIntakeActivities } from '../../activities/intakes.ts';
import {
  documentDeletedSignal,
  documentFileUploadedSignal,
  intakeDocumentLifecycle,
} from '../../workflows/intakeDocumentLifecycle.ts';
import { intakeDeletedSignal, intakeExpiryChangedSignal, intakeLifecycle } from '../../workflows/intakeLifecycle.ts';
import { bundleWorkflows, untilCalled, withWorker } from '../helpers/workflows.ts';

// The intake workflows against the real Temporal dev server, with stub
// activities: the order of what they do and when, not what the database does.

type Activities = ReturnType<typeof createIntakeActivities>;
type Plan = Awaited<ReturnType<Activities['loadDocumentPlan']>>;

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Stub activities recording their calls; `overrides` replace the defaults. */
function stubs(calls: string[], plan: Partial<Plan>, overrides: Partial<Activities> = {}): Activities {
  const record =
    <T>(name: string, result: T) =>
    async (id?: string) => {
      calls.push(id === undefined ? name : `${name}:${id}`);
      return result;
    };
  return {
    loadDocumentPlan: async () => ({
      mode: 'server',
      fileIds: ['f1', 'f2'],
      uploadedFileIds: [],
      uploadDeadline: soon(60_000),
      status: 'uploading',
      retentionUntil: null,
      ...plan,
    }),
    receiveDocument: async () => {
      calls.push('receiveDocument');
      return soon(1_000);
    },
    notifyDocumentReceived: record('notifyDocumentReceived', undefined),
    beginDocumentScan: record('beginDocumentScan', undefined),
    scanIntakeFile: async (fileId: string) => {
      calls.push(`scanIntakeFile:${fileId}`);
      return 'clean';
    },
    settleDocumentScan: async () => {
      calls.push('settleDocumentScan');
      return 'available';
    },
    destroyDocument: record('destroyDocument', undefined),
    purgeDocumentBlobs: record('purgeDocumentBlobs', undefined),
    loadIntakeExpiry: async () => ({ status: 'open', expiresAt: null }),
    expireIntake: record('expireIntake', undefined),
    ...overrides,
  } as unknown as Activities;
}

test('a server-mode document: received once every file is in, scanned file by file, destroyed when retention ends', async (t) => {
  const calls: string[] = [];
  await withWorker(bundle, stubs(calls, {}), async (client, taskQueue) => {
    const handle = await client.workflow.start(intakeDocumentLifecycle, {
      taskQueue,
      workflowId: `test-intake-document-${randomUUID()}`,
      args: [{ documentId: 'doc_1' }],
    });
    await handle.signal(documentFileUploadedSignal, 'f1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.deepEqual(calls, [], 'nothing happens before the last file is in');
    await handle.signal(documentFileUploadedSignal, 'f2');
    t.is(await handle.result(), 'retention_ended');
  });
  t.deepEqual(calls, [
    'receiveDocument',
    'notifyDocumentReceived:doc_1',
    'beginDocumentScan:doc_1',
    'scanIntakeFile:f1',
    'scanIntakeFile:f2',
    'settleDocumentScan',
    'destroyDocument:doc_1',
    'purgeDocumentBlobs:doc_1',
  ]);
});

test('an end-to-end document is never scanned, and a mail server that fails does not hold it back', async (t) => {
  const calls: string[] = [];
  const failingMail = {
    notifyDocumentReceived: async () => {
      calls.push('notify-failed');
      // Not retried, so the test does not wait out MAIL_RETRY's backoff.
      throw ApplicationFailure.nonRetryable('mail server down');
    },
  };
  const activities = stubs(calls, { mode: 'e2e_asym', uploadedFileIds: ['f1', 'f2'] }, failingMail);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const result = await client.workflow.execute(intakeDocumentLifecycle, {
      taskQueue,
      workflowId: `test-intake-document-${randomUUID()}`,
      args: [{ documentId: 'doc_2' }],
    });
    t.is(result, 'retention_ended');
  });
  t.false(calls.some((call) => call.startsWith('scan') || call.startsWith('beginDocumentScan')));
  t.true(calls.includes('notify-failed'));
  t.deepEqual(calls.slice(-2), ['destroyDocument:doc_2', 'purgeDocumentBlobs:doc_2']);
});

test('a document whose files miss the upload deadline is destroyed; an infected one is rejected', async (t) => {
  const late: string[] = [];
  await withWorker(bundle, stubs(late, { uploadDeadline: soon(800) }), async (client, taskQueue) => {
    const result = await client.workflow.execute(intakeDocumentLifecycle, {
      taskQueue,
      workflowId: `test-intake-document-${randomUUID()}`,
      args: [{ documentId: 'doc_3' }],
    });
    t.is(result, 'upload_incomplete');
  });
  t.deepEqual(late, ['destroyDocument:doc_3', 'purgeDocumentBlobs:doc_3']);

  const infected: string[] = [];
  const rejecting = {
    settleDocumentScan: async () => {
      infected.push('settleDocumentScan');
      return 'rejected';
    },
  };
  const activities = stubs(infected, { uploadedFileIds: ['f1', 'f2'] }, rejecting as Partial<Activities>);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const result = await client.workflow.execute(intakeDocumentLifecycle, {
      taskQueue,
      workflowId: `test-intake-document-${randomUUID()}`,
      args: [{ documentId: 'doc_4' }],
    });
    t.is(result, 'rejected');
  });
  t.false(infected.includes('destroyDocument:doc_4'), 'a rejected document is purged, its keys kept for the record');
  t.is(infected.at(-1), 'purgeDocumentBlobs:doc_4');
});

test('a document whose file fails its scan for good is rejected and purged, not left processing', async (t) => {
  const calls: string[] = [];
  const failing = {
    scanIntakeFile: async (fileId: string) => {
      calls.push(`scanIntakeFile:${fileId}`);
      if (fileId === 'f1') throw ApplicationFailure.nonRetryable('f1 does not match its upload', 'ChecksumMismatch');
      return 'clean';
    },
    rejectUnverifiedDocument: async (id: string) => {
      calls.push(`rejectUnverifiedDocument:${id}`);
    },
  };
  const activities = stubs(calls, { uploadedFileIds: ['f1', 'f2'] }, failing as Partial<Activities>);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const result = await client.workflow.execute(intakeDocumentLifecycle, {
      taskQueue,
      workflowId: `test-intake-document-${randomUUID()}`,
      args: [{ documentId: 'doc_5' }],
      workflowExecutionTimeout: '1 minute',
    });
    t.is(result, 'scan_failed');
  });
  t.deepEqual(calls.slice(-3), ['scanIntakeFile:f1', 'rejectUnverifiedDocument:doc_5', 'purgeDocumentBlobs:doc_5']);
  t.false(calls.includes('settleDocumentScan'), 'never made available');
});

test('deleting a document during retention purges its blobs at once', async (t) => {
  const calls: string[] = [];
  const longRetention = {
    receiveDocument: async () => {
      calls.push('receiveDocument');
      return soon(3_600_000);
    },
  };
  const activities = stubs(calls, { mode: 'e2e_asym', uploadedFileIds: ['f1', 'f2'] }, longRetention);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await client.workflow.start(intakeDocumentLifecycle, {
      taskQueue,
      workflowId: `test-intake-document-${randomUUID()}`,
      args: [{ documentId: 'doc_5' }],
    });
    await untilCalled(calls, (seen) => seen.includes('notifyDocumentReceived:doc_5'), 'the owner notification');
    await handle.signal(documentDeletedSignal);
    t.is(await handle.result(), 'deleted');
  });
  t.is(calls.at(-1), 'purgeDocumentBlobs:doc_5');
});

test('intakeLifecycle expires the intake at expires_at, follows a moved expiry, and ends when deleted', async (t) => {
  const calls: string[] = [];
  let expiresAt: string | null = soon(60_000);
  const activities = stubs(
    calls,
    {},
    {
      loadIntakeExpiry: async () => {
        calls.push('loadIntakeExpiry');
        return { status: 'open', expiresAt };
      },
    },
  );
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await client.workflow.start(intakeLifecycle, {
      taskQueue,
      workflowId: `test-intake-${randomUUID()}`,
      args: [{ intakeId: 'in_1' }],
    });
    await untilCalled(calls, (seen) => seen.length === 1, 'the first read');
    const moved = Date.now() + 800;
    expiresAt = new Date(moved).toISOString();
    await handle.signal(intakeExpiryChangedSignal);
    await untilCalled(calls, (seen) => seen.includes('expireIntake:in_1'), 'the expiry');
    t.true(Date.now() >= moved, 'not before the moved expiry');
    await handle.signal(intakeDeletedSignal);
    t.is(await handle.result(), 'deleted');
  });
  // Read at start, on the signal, when the timer fires; deleted, it reads nothing more.
  t.deepEqual(calls, ['loadIntakeExpiry', 'loadIntakeExpiry', 'loadIntakeExpiry', 'expireIntake:in_1']);
});
