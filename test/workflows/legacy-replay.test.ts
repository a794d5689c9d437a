import { readdirSync, readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import { bundleWorkflows } from '../helpers/workflows.ts';

// Workflows started before ownerExpiry and fileLifecycle replaced intakeLifecycle,
// intakeDocumentLifecycle, coffreLifecycle and coffreItemLifecycle must still complete after a
// deploy: a worker replays each history with the code of its type, now a thin wrapper over the
// generic loop, and any command that differs fails the workflow task. legacy-histories/ holds
// complete histories of every path of those four workflows as they were before the change,
// written by running that code with stub activities (the scenarios of their stub-activity tests);
// each must replay against the current bundle. Delete them with the wrappers. They are binary
// protobuf (`History.encode`): this install's historyFromJSON cannot read JSON histories.

const folder = new URL('./legacy-histories/', import.meta.url);
const histories = readdirSync(folder).filter((name) => name.endsWith('.bin'));

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

test('the histories cover every replaced workflow type', (t) => {
  const types = new Set(histories.map((name) => name.split('-')[0]));
  t.deepEqual([...types].sort(), [
    'coffreItemLifecycle',
    'coffreLifecycle',
    'intakeDocumentLifecycle',
    'intakeLifecycle',
  ]);
});

for (const name of histories) {
  test(`${name.replace(/\.bin$/, '')} replays against the current workflows`, async (t) => {
    const history = proto.temporal.api.history.v1.History.decode(readFileSync(new URL(name, folder)));
    await t.notThrowsAsync(Worker.runReplayHistory({ workflowBundle: bundle }, history, name));
  });
}
