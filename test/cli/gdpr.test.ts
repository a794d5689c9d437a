import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { type Cli, cli } from './cli-harness.ts';

// `valise legal` and `valise gdpr` with the real binary against the real API and worker.

let api: TestApi;
let ws: TestWorkspace;
let valise: Cli;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI GDPR');
  valise = await cli(api.url, ws.keys.live);
});
test.after.always(async () => {
  await api?.close();
  if (valise) await rm(valise.home, { recursive: true, force: true });
});

test('legal documents, accepting one, and the acceptances', async (t) => {
  const documents = await valise.json(['legal', 'documents']);
  t.true(documents.data.some((d: { slug: string }) => d.slug === 'accord-traitement-donnees'));
  const accepted = await valise.json(['legal', 'accept', 'accord-traitement-donnees']);
  t.is(accepted.slug, 'accord-traitement-donnees');
  const acceptances = await valise.json(['gdpr', 'acceptances']);
  const entry = acceptances.data.find((e: { slug: string }) => e.slug === 'accord-traitement-donnees');
  t.true(entry.up_to_date);
  const table = await valise.run(['gdpr', 'acceptances']);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /accord-traitement-donnees/);
  t.regex(table.stderr, /up to date/);
  const wrong = await valise.run(['legal', 'accept', 'accord-traitement-donnees', '--version', 'nope']);
  t.is(wrong.code, 2);
});

test('gdpr export waits for the export and writes its JSON', async (t) => {
  const output = join(valise.home, 'export.json');
  const result = await valise.run(['gdpr', 'export', '--user', ws.user_id, '--output', output]);
  t.is(result.code, 0, result.stderr);
  const data = JSON.parse(await readFile(output, 'utf8'));
  t.is(data.object, 'gdpr_export_data');
  t.is(data.user_id, ws.user_id);
  t.truthy(data.families.workspaces.users);
  const toStdout = await valise.run(['gdpr', 'export']);
  t.is(toStdout.code, 0, toStdout.stderr);
  t.is(JSON.parse(toStdout.stdout).user_id, null);
});
