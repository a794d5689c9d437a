import { rm } from 'node:fs/promises';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { createTransfer } from '../helpers/transfers.ts';
import { cli } from './cli-harness.ts';

// `valise collections …` through the real binary against the real API (docs/cli.md).

let api: TestApi;
let ws: TestWorkspace;
let home: string | undefined;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI collections');
});
test.after.always(async () => {
  await api.close();
  if (home) await rm(home, { recursive: true, force: true });
});

test('collections create, add, show, rename, rotate-link, disable-link, remove and rm', async (t) => {
  const valise = await cli(api.url, ws.keys.live);
  home = valise.home;
  const transfer = async () =>
    (await createTransfer(api, ws.keys.live, { files: [{ name: 'x.bin', size: 1 }] })).transfer.id;
  const [first, second] = [await transfer(), await transfer()];

  const created = await valise.json(['collections', 'create', '--title', 'From the CLI', first]);
  t.is(created.object, 'collection');
  t.regex(created.share_url, /\/c\/\w+$/);
  const id = created.id as string;

  const added = await valise.json(['collections', 'add', id, second, '--position', '0']);
  t.deepEqual(
    added.transfers.map((x: { id: string }) => x.id),
    [second, first],
  );

  const shown = await valise.run(['collections', 'show', id]);
  t.is(shown.code, 0, shown.stderr);
  t.true(shown.stdout.includes('From the CLI'));
  t.true(shown.stdout.includes(second));

  t.is((await valise.json(['collections', 'rename', id, '--title', 'Renamed'])).title, 'Renamed');
  const listed = await valise.json(['collections', 'ls']);
  t.true(listed.data.some((c: { id: string; title: string }) => c.id === id && c.title === 'Renamed'));

  const rotated = await valise.run(['collections', 'rotate-link', id]);
  t.is(rotated.code, 0, rotated.stderr);
  t.regex(rotated.stdout.trim(), /\/c\/\w+$/);
  t.not(rotated.stdout.trim(), created.share_url);
  t.is((await valise.json(['collections', 'disable-link', id])).share_url, null);

  t.deepEqual(
    (await valise.json(['collections', 'remove', id, first])).transfers.map((x: { id: string }) => x.id),
    [second],
  );
  t.deepEqual(await valise.json(['collections', 'rm', id]), { id, object: 'collection', deleted: true });

  const missing = await valise.run(['collections', 'show', id]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /not_found/);
  const usage = await valise.run(['collections', 'create']);
  t.is(usage.code, 1);
});
