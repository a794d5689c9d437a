import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import { eventually } from '../helpers/api.ts';
import { content, put } from '../helpers/transfers.ts';
import { checkZip } from '../helpers/zip.ts';
import { downloadBytes, screenshot, webSession } from './browser.ts';

// The vault page at an invitation link, driven in Chromium: a member with
// download access sees the items and downloads one byte-identical; a view-only
// member sees them without a download button; an upload member adds a file.

const web = webSession('Web vault');
const key = () => web.ws.keys.test;

async function call(method: string, path: string, body?: unknown) {
  const answer = await web.api.call(method, path, { key: key(), ...(body === undefined ? {} : { body }) });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return answer.body;
}

async function vaultWith(files: Record<string, Buffer>) {
  const coffre = await call('POST', '/v1/coffres', { name: 'Board papers', description: 'For the March meeting' });
  for (const [name, bytes] of Object.entries(files)) {
    const created = await call('POST', `/v1/coffres/${coffre.id}/items`, { name, size: bytes.length });
    await put(created.upload_url.url, bytes);
    await eventually(async () => {
      const item = await call('GET', `/v1/coffres/${coffre.id}/items/${created.item.id}`);
      return item.status === 'available' ? true : undefined;
    }, 60_000);
  }
  return coffre;
}

const invite = (coffreId: string, access: string) =>
  call('POST', `/v1/coffres/${coffreId}/members`, { email: `${access}-${Date.now()}@valise.test`, access });

async function openPage(url: string): Promise<Page> {
  const page = await web.context.newPage();
  const response = await page.goto(url);
  if (!response?.ok()) throw new Error(`GET ${url}: ${response?.status()}`);
  return page;
}

test('the page carries a strict CSP and no referrer, with no inline script', async (t) => {
  const coffre = await vaultWith({});
  const member = await invite(coffre.id, 'view');
  const response = await fetch(member.invitation_url);
  t.is(response.status, 200);
  const csp = response.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'self'/);
  t.notRegex(csp, /unsafe-inline/);
  t.is(response.headers.get('referrer-policy'), 'no-referrer');
  const html = await response.text();
  t.false(/<script(?![^>]*\bsrc=)[^>]*>/.test(html), 'no inline script');
  const asset = await fetch(`${web.api.url}/assets/coffre.js`);
  t.true(asset.headers.get('content-type')?.startsWith('text/javascript'));
});

test('a member with download access opens the invitation, sees the items and downloads one byte-identical', async (t) => {
  const minutes = content(250_000);
  const budget = content(40_000);
  const coffre = await vaultWith({ 'minutes.pdf': minutes, 'budget.xlsx': budget });
  const member = await invite(coffre.id, 'download');
  const page = await openPage(member.invitation_url);
  await page.getByRole('heading', { name: 'Board papers' }).waitFor();
  t.true(await page.getByText('For the March meeting').isVisible());
  t.true(await page.getByText('minutes.pdf').isVisible());
  t.true(await page.getByText('budget.xlsx').isVisible());
  await screenshot(page, 'coffre-download');
  const received = await downloadBytes(page, () => page.getByRole('button', { name: 'Download minutes.pdf' }).click());
  t.true(received.equals(minutes));
  t.false(await page.getByLabel('Add a file').isVisible(), 'no upload without upload access');

  // One ZIP of the ticked items, then of them all, built by the server and checked as unzip does.
  const dir = await mkdtemp(join(tmpdir(), 'valise-coffre-page-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const zipEntries = async (bytes: Buffer, name: string) => {
    await writeFile(join(dir, name), bytes);
    const check = await checkZip(join(dir, name));
    t.true(check.unzipOk, check.unzipOutput);
    return check.entries;
  };
  await page.getByLabel('Select budget.xlsx').check();
  await screenshot(page, 'coffre-zip-selection');
  const selection = await downloadBytes(page, () =>
    page.getByRole('button', { name: 'Download 1 selected as ZIP' }).click(),
  );
  t.deepEqual(await zipEntries(selection, 'selection.zip'), { 'budget.xlsx': sha256(budget) });
  await page.getByLabel('Select budget.xlsx').uncheck();
  const whole = await downloadBytes(page, () => page.getByRole('button', { name: 'Download all as ZIP' }).click());
  t.deepEqual(await zipEntries(whole, 'whole.zip'), {
    'minutes.pdf': sha256(minutes),
    'budget.xlsx': sha256(budget),
  });
  await page.close();

  const log = await call('GET', `/v1/coffres/${coffre.id}/access-log`);
  t.true(
    log.data.some(
      (e: { actor: string; action: string; item_name: string }) =>
        e.actor === member.email && e.action === 'downloaded' && e.item_name === 'minutes.pdf',
    ),
  );
});

test('a view-only member sees the items and no download button', async (t) => {
  const coffre = await vaultWith({ 'secret-plan.pdf': content(10_000) });
  const member = await invite(coffre.id, 'view');
  const page = await openPage(member.invitation_url);
  await page.getByText('secret-plan.pdf').waitFor();
  t.true(await page.getByText(/you can see the files/).isVisible());
  t.is(await page.getByRole('button', { name: /Download/ }).count(), 0);
  t.is(await page.getByRole('checkbox').count(), 0, 'nothing to select for an archive');
  await screenshot(page, 'coffre-view-only');
  await page.close();
});

test('a member with upload access adds a file from the page', async (t) => {
  const coffre = await vaultWith({});
  const member = await invite(coffre.id, 'upload');
  const page = await openPage(member.invitation_url);
  await page.getByText('This vault holds no files yet.').waitFor();
  const bytes = content(30_000);
  await page.getByLabel('Add a file').setInputFiles({ name: 'signed.pdf', mimeType: 'application/pdf', buffer: bytes });
  // The answer to the first declaration is lost after the server made the item: the page retries
  // with the same Idempotency-Key and gets that item back.
  const idempotencyKeys: string[] = [];
  await page.route('**/v1/coffre-access/*/items', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    idempotencyKeys.push(route.request().headers()['idempotency-key'] ?? '');
    if (idempotencyKeys.length > 1) return route.continue();
    await route.fetch();
    return route.abort('connectionreset');
  });
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByText(/signed\.pdf is uploaded/).waitFor();
  await screenshot(page, 'coffre-upload');
  t.is(idempotencyKeys.length, 2);
  t.is(idempotencyKeys[1], idempotencyKeys[0]);
  const items = await eventually(async () => {
    const listed = await call('GET', `/v1/coffres/${coffre.id}/items`);
    return listed.data.find((i: { status: string }) => i.status === 'available');
  }, 60_000);
  t.is((await call('GET', `/v1/coffres/${coffre.id}/items`)).data.length, 1, 'one item for the retried declaration');
  t.is(items.name, 'signed.pdf');
  t.is(items.uploaded_by.member_id, member.id);
  await page.close();
});

test('a revoked member sees why, not the files', async (t) => {
  const coffre = await vaultWith({ 'a.txt': content(100) });
  const member = await invite(coffre.id, 'download');
  await call('DELETE', `/v1/coffres/${coffre.id}/members/${member.id}`);
  const page = await openPage(member.invitation_url);
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /revoked/);
  t.is(await page.getByText('a.txt').count(), 0);
  await page.close();
});
