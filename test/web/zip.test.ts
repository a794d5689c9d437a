import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Valise } from '../../sdk/src/index.ts';
import { content, createTransfer, put, waitForTransfer } from '../helpers/transfers.ts';
import { checkZip } from '../helpers/zip.ts';
import { downloadBytes, screenshot, webSession } from './browser.ts';

// "Download all" in Chromium: on a server-mode share the API's archive, on an e2e share a ZIP the
// page builds from the files it decrypts, on a collection's page the archive of its open
// transfers. Each saved file is read by unzip -t and Python's zipfile, every entry byte-identical.

const web = webSession('Web archives');
let dir = '';
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'valise-web-zip-'));
});
test.after.always(() => rm(dir, { recursive: true, force: true }));

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const expected = (files: Record<string, Buffer>, folder = '') =>
  Object.fromEntries(Object.entries(files).map(([name, bytes]) => [`${folder}${name}`, sha(bytes)]));

async function entriesOf(t: { true: (v: boolean, m?: string) => void }, bytes: Buffer) {
  const path = join(dir, `${randomBytes(6).toString('hex')}.zip`);
  await writeFile(path, bytes);
  const check = await checkZip(path);
  t.true(check.unzipOk, check.unzipOutput);
  t.true(check.bad === null, `bad entry ${check.bad}`);
  return check.entries;
}

async function serverTransfer(title: string, files: Record<string, Buffer>) {
  const created = await createTransfer(web.api, web.ws.keys.test, {
    transfer_title: title,
    files: Object.entries(files).map(([name, bytes]) => ({ name, size: bytes.length })),
  });
  for (const [i, bytes] of Object.values(files).entries()) {
    const stored = await put(created.upload_urls[i]?.url ?? '', bytes);
    if (stored.status !== 200) throw new Error(`upload failed: ${stored.status}`);
  }
  await waitForTransfer(web.api, web.ws.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  return created;
}

test('server mode: "Download all" saves the API’s ZIP, valid and byte-identical', async (t) => {
  const files = { 'report.pdf': content(400_000), 'Café — 写真.jpg': randomBytes(70_001), 'notes.txt': content(100) };
  const created = await serverTransfer('Quarter close', files);
  const page = await web.context.newPage();
  await page.goto(created.share_url);
  const button = page.getByRole('button', { name: /Download all/ });
  await button.waitFor();
  const zip = await downloadBytes(page, () => button.click());
  t.deepEqual(await entriesOf(t, zip), expected(files));
  await page.getByText('Quarter close.zip').waitFor();
  await screenshot(page, 'zip-server');
  await page.close();
});

test('end to end: "Download all" builds the ZIP in the browser from the decrypted files, valid and byte-identical', async (t) => {
  const files = { 'first.bin': content(300_000), 'second.bin': randomBytes(70_001), 'third.txt': content(10) };
  const valise = new Valise({ apiKey: web.ws.keys.test, baseUrl: web.api.url });
  const sent = await valise.transfers.send({
    mode: 'e2e',
    transfer_title: 'Sealed pack',
    files: Object.entries(files).map(([name, bytes]) => ({ blob: new Blob([new Uint8Array(bytes)]), name })),
  });
  await waitForTransfer(web.api, web.ws.keys.test, sent.transfer.id, (tr) => tr.status === 'active');
  const key = new URL(sent.shareUrl).hash.slice(3);
  const page = await web.context.newPage();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(sent.shareUrl);
  await page.getByText('End-to-end encrypted').waitFor();
  const zip = await downloadBytes(page, () => page.getByRole('button', { name: /Download all/ }).click());
  t.deepEqual(await entriesOf(t, zip), expected(files));
  await page.getByText('Sealed pack.zip: 3 files decrypted and saved').waitFor();
  t.log(`saved by: ${await page.evaluate('document.body.dataset.saveMethod')}`);
  await screenshot(page, 'zip-e2e');
  t.false(
    requested.some((url) => url.includes(key)),
    'no request carries the key',
  );
  t.false(
    requested.some((url) => url.includes('/archive')),
    'the server was never asked for an archive',
  );
  await page.close();
});

test('a collection page: "Download all as ZIP" saves its open transfers, a folder each', async (t) => {
  const first = { 'a.txt': content(5000), 'b.bin': randomBytes(20_000) };
  const second = { 'c.bin': content(123_456) };
  const [one, two] = await Promise.all([serverTransfer('One', first), serverTransfer('Two', second)]);
  const collection = await web.api.call('POST', '/v1/collections', {
    key: web.ws.keys.test,
    body: { title: 'Launch kit', transfer_ids: [one.transfer.id, two.transfer.id] },
  });
  t.is(collection.status, 201, collection.text);
  const page = await web.context.newPage();
  await page.goto(collection.body.share_url);
  const button = page.getByRole('button', { name: /Download all as ZIP \(3 files/ });
  await button.waitFor();
  await screenshot(page, 'zip-collection');
  const zip = await downloadBytes(page, () => button.click());
  t.deepEqual(await entriesOf(t, zip), { ...expected(first, 'One/'), ...expected(second, 'Two/') });
  await page.close();
});
