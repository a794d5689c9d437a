import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import { createTransferQueries } from '../../lib/db/queries/transfers.ts';
import { Valise } from '../../sdk/src/index.ts';
import { content, createTransfer, links, put, waitForTransfer } from '../helpers/transfers.ts';
import { checkZip } from '../helpers/zip.ts';
import { downloadBytes, screenshot, webSession } from './browser.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// The recipient page at share_url, driven in Chromium: server-mode and e2e
// downloads (byte-identical), the password prompt, and every blocked state.

const web = webSession('Web recipient');

async function activeTransfer(body: Record<string, unknown>, bytes: Buffer, name = 'report.bin') {
  const created = await createTransfer(web.api, web.ws.keys.test, {
    files: [{ name, size: bytes.length, mime_type: 'application/octet-stream' }],
    ...body,
  });
  const upload = created.upload_urls[0];
  if (!upload) throw new Error('no upload URL');
  const stored = await put(upload.url, bytes);
  if (stored.status >= 300) throw new Error(`upload failed: ${stored.status}`);
  await waitForTransfer(web.api, web.ws.keys.test, created.transfer.id, (t) => t.status === 'active');
  return created;
}

/** An e2e transfer of these files, sent with the SDK (the key stays in its share URL) and active. */
async function sentE2e(files: Record<string, Buffer>, options: { transfer_title?: string; password?: string } = {}) {
  const valise = new Valise({ apiKey: web.ws.keys.test, baseUrl: web.api.url });
  const sent = await valise.transfers.send({
    mode: 'e2e',
    ...options,
    files: Object.entries(files).map(([name, bytes]) => ({ blob: new Blob([new Uint8Array(bytes)]), name })),
  });
  await waitForTransfer(web.api, web.ws.keys.test, sent.transfer.id, (tr) => tr.status === 'active');
  return sent;
}

async function openPage(url: string): Promise<Page> {
  const page = await web.context.newPage();
  const response = await page.goto(url);
  if (!response?.ok()) throw new Error(`GET ${url}: ${response?.status()}`);
  return page;
}

test('the page carries a strict CSP and no-referrer, and its assets the right types', async (t) => {
  const bytes = content(1000);
  const created = await activeTransfer({ transfer_title: '<script>alert(1)</script>' }, bytes);
  const response = await fetch(created.share_url, { headers: { accept: 'text/html' } });
  const html = await response.text();
  t.regex(response.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  t.notRegex(response.headers.get('content-security-policy') ?? '', /unsafe-inline/);
  t.is(response.headers.get('referrer-policy'), 'no-referrer');
  t.false(html.includes('<script>alert(1)</script>'));
  t.true(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  t.false(/<script(?![^>]*\bsrc=)[^>]*>/.test(html), 'no inline script');
  for (const [path, type] of [
    ['/assets/share.js', 'text/javascript'],
    ['/assets/styles.css', 'text/css'],
    ['/assets/sdk/crypto/val1.js', 'text/javascript'],
  ] as const) {
    const asset = await fetch(web.api.url + path);
    t.is(asset.status, 200, path);
    t.true(asset.headers.get('content-type')?.startsWith(type), path);
    t.truthy(asset.headers.get('etag'), path);
  }
  t.is((await fetch(`${web.api.url}/assets/../package.json`)).status, 404);
  t.is((await fetch(`${web.api.url}/assets/sdk/index.d.ts`)).status, 404);
});

test('a server-mode transfer downloads byte-identical from the page', async (t) => {
  const bytes = content(300_000);
  const created = await activeTransfer({ transfer_title: 'Quarterly report' }, bytes);
  const page = await openPage(created.share_url);
  await page.getByRole('heading', { name: 'Quarterly report' }).waitFor();
  t.true(await page.getByText('report.bin').isVisible());
  await screenshot(page, 'share-server');
  const received = await downloadBytes(page, () => page.getByRole('button', { name: 'Download report.bin' }).click());
  t.true(received.equals(bytes));
  await page.close();
});

test('an e2e transfer of two files decrypts in the browser, byte-identical, and the key never leaves it', async (t) => {
  const first = content(200_000);
  const second = randomBytes(70_001);
  const sent = await sentE2e({ 'first.bin': first, 'second.bin': second }, { transfer_title: 'Encrypted pair' });
  const key = new URL(sent.shareUrl).hash.slice(3);
  t.is(key.length, 43);

  const page = await web.context.newPage();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(sent.shareUrl);
  await page.getByText('End-to-end encrypted').waitFor();
  await screenshot(page, 'share-e2e');

  // "Download all" is one ZIP built here (test/web/zip.test.ts checks it); each file still downloads alone.
  t.true(
    (await downloadBytes(page, () => page.getByRole('button', { name: 'Download first.bin' }).click())).equals(first),
  );
  t.true(
    (await downloadBytes(page, () => page.getByRole('button', { name: 'Download second.bin' }).click())).equals(second),
  );
  await page.getByText('second.bin: decrypted and saved').waitFor();
  t.log(`saved by: ${await page.evaluate('document.body.dataset.saveMethod')}`);
  await screenshot(page, 'share-e2e-done');
  t.false(
    requested.some((url) => url.includes(key)),
    'no request carries the key',
  );
  await page.close();
});

test('an e2e link without its key says so and offers no download', async (t) => {
  const sent = await sentE2e({ 'a.bin': content(5000) });
  const page = await openPage(sent.shareUrl.split('#')[0] ?? '');
  await page.getByRole('alert').filter({ hasText: 'missing its decryption key' }).waitFor();
  t.true(await page.getByRole('button', { name: 'Download a.bin' }).isDisabled());
  await page.close();
});

test('behind a password the page names no file; a wrong password is refused, the right one lists the files and downloads', async (t) => {
  const bytes = content(50_000);
  const created = await activeTransfer({ password: 'correct horse', transfer_title: 'Private' }, bytes, 'secret.txt');
  const page = await openPage(created.share_url);
  t.is(await page.getByText('secret.txt').count(), 0, 'no file name before the password');
  t.is(await page.getByText('Private').count(), 0, 'no title before the password');
  const field = page.getByLabel('Password');
  await field.fill('wrong guess');
  await page.getByRole('button', { name: 'Unlock' }).click();
  await page.getByRole('alert').filter({ hasText: 'The password is not correct.' }).waitFor();
  t.is(await field.getAttribute('aria-invalid'), 'true');
  await screenshot(page, 'share-password-wrong');
  await field.fill('correct horse');
  await page.getByRole('button', { name: 'Unlock' }).click();
  await page.getByRole('heading', { name: 'Private' }).waitFor();
  await screenshot(page, 'share-password-unlocked');
  const received = await downloadBytes(page, () => page.getByRole('button', { name: 'Download secret.txt' }).click());
  t.true(received.equals(bytes));
  await page.close();
});

async function expectState(t: any, shareUrl: string, state: string, text: RegExp, status = 200) {
  const page = await web.context.newPage();
  const response = await page.goto(shareUrl);
  t.is(response?.status(), status, state);
  const notice = page.locator(`[data-state="${state}"]`);
  await notice.waitFor();
  t.regex((await notice.textContent()) ?? '', text, state);
  t.is(await page.getByRole('button', { name: /^Download/ }).count(), 0, `${state}: no download button`);
  await screenshot(page, `state-${state}`);
  await page.close();
}

test('each blocked state is shown plainly', async (t) => {
  const uploading = await createTransfer(web.api, web.ws.keys.test, { files: [{ name: 'later.bin', size: 10 }] });
  // The scan takes a moment on a real upload; hold a transfer in that state the way the worker does.
  const scanning = await createTransfer(web.api, web.ws.keys.test, { files: [{ name: 'checked.bin', size: 10 }] });
  await createTransferQueries(web.api.services.db).setScanning(scanning.transfer.id, 'scanning');
  const expiring = await activeTransfer({ expires_in_hours: 6 / 3600 }, content(1000));
  const approval = await createTransfer(web.api, web.ws.keys.test, {
    files: [{ name: 'wait.bin', size: 1000 }],
    approval_required: true,
  });
  await put(approval.upload_urls[0]?.url ?? '', content(1000));
  const limited = await activeTransfer({ max_downloads: 1 }, content(1000));
  t.is((await links(web.api, limited.transfer.short_code)).status, 200);
  const revoked = await activeTransfer({}, content(1000));
  t.is((await web.api.call('DELETE', `/v1/transfers/${revoked.transfer.id}`, { key: web.ws.keys.test })).status, 200);

  await expectState(t, uploading.share_url, 'uploading', /still uploading/);
  await expectState(t, scanning.share_url, 'scanning', /Checking for malware/);
  await waitForTransfer(web.api, web.ws.keys.test, approval.transfer.id, (tr) => tr.status !== 'scanning');
  await expectState(t, approval.share_url, 'awaiting_approval', /waiting for approval/);
  await expectState(t, limited.share_url, 'limit_reached', /download limit/);
  await expectState(t, revoked.share_url, 'revoked', /deleted this transfer/, 410);
  const wait = new Date(expiring.transfer.expires_at).getTime() - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 500));
  await expectState(t, expiring.share_url, 'expired', /expired/, 410);
});

test('the page fits a 360 px wide screen', async (t) => {
  const created = await activeTransfer(
    { transfer_title: 'A rather long title for a narrow phone screen' },
    content(10),
  );
  const page = await web.context.newPage();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(created.share_url);
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 360'));
  await screenshot(page, 'share-mobile');
  await page.close();
});

test('without JavaScript the form unlocks with the password (after a wrong one) and downloads a server-mode file', async (t) => {
  const bytes = content(120_000);
  const created = await activeTransfer({ password: 'open sesame', transfer_title: 'No script' }, bytes, 'plain.csv');
  const noScript = await web.browser.newContext({ acceptDownloads: true, javaScriptEnabled: false });
  try {
    const page = await noScript.newPage();
    await page.goto(created.share_url);
    await page.getByLabel('Password').waitFor();
    t.is(await page.getByText('plain.csv').count(), 0, 'no file name before the password');
    await page.getByLabel('Password').fill('not it');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByRole('alert').filter({ hasText: 'The password is not correct.' }).waitFor();
    await screenshot(page, 'share-no-js-wrong-password');
    await page.getByLabel('Password').fill('open sesame');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByRole('heading', { name: 'No script' }).waitFor();
    const received = await downloadBytes(page, () => page.getByRole('button', { name: 'Download plain.csv' }).click());
    t.true(received.equals(bytes));
  } finally {
    await noScript.close();
  }
});

test('an e2e transfer of two files behind a password is listed after the password and decrypts byte-identical', async (t) => {
  const first = content(90_000);
  const second = randomBytes(1_234);
  const sent = await sentE2e({ 'one.bin': first, 'two.bin': second }, { password: 'both files, please' });
  const page = await web.context.newPage();
  await page.goto(sent.shareUrl);
  await page.getByLabel('Password').fill('both files, please');
  await page.getByRole('button', { name: 'Unlock' }).click();
  await page.getByRole('button', { name: 'Download two.bin' }).waitFor();
  const zip = await downloadBytes(page, () => page.getByRole('button', { name: /Download all/ }).click());
  const path = join(tmpdir(), `valise-recipient-${randomBytes(6).toString('hex')}.zip`);
  await writeFile(path, zip);
  const check = await checkZip(path);
  await rm(path, { force: true });
  t.true(check.unzipOk, check.unzipOutput);
  t.deepEqual(check.entries, { 'one.bin': sha256(first), 'two.bin': sha256(second) });
  await page.close();
});
