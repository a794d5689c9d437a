import test from 'ava';
import { content, waitForTransfer } from '../helpers/transfers.ts';
import { downloadBytes, filesOnDisk, screenshot, webSession } from './browser.ts';

// The sender page at /send, driven in Chromium: choose a file, upload it with a
// test key in server and e2e modes, read the link, download it back.

const web = webSession('Web sender');

for (const mode of ['server', 'e2e'] as const) {
  test(`a sender uploads through the page (${mode} mode) and the link downloads the same bytes`, async (t) => {
    // In e2e mode the page sends the blob in part-sized chunks: make it take two.
    const bytes = content(mode === 'e2e' ? 9 * 1024 * 1024 : 150_000);
    const page = await web.context.newPage();
    const puts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT') puts.push(request.headers()['content-range'] ?? 'whole file');
    });
    const response = await page.goto(`${web.api.url}/send`);
    t.regex(response?.headers()['content-security-policy'] ?? '', /default-src 'self'/);
    await page.getByLabel('API key').fill(web.ws.keys.test);
    await page.setInputFiles('#files', await filesOnDisk(t, { [`upload-${mode}.bin`]: bytes }));
    await page.getByText(`upload-${mode}.bin`).waitFor();
    if (mode === 'e2e') await page.getByLabel(/End to end/).check();
    await page.getByText('Options').click();
    await page.getByLabel('Title').fill(`Sent from the page (${mode})`);
    await screenshot(page, `send-${mode}-filled`);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('heading', { name: 'Your link is ready' }).waitFor({ timeout: 30_000 });
    const shareUrl = await page.getByLabel('Share this link').inputValue();
    t.true(shareUrl.startsWith(`${web.api.url}/t/`));
    t.is(shareUrl.includes('#k='), mode === 'e2e');
    await screenshot(page, `send-${mode}-done`);
    if (mode === 'e2e') {
      t.is(puts.length, 2);
      t.regex(puts[0] ?? '', /^bytes 0-8388607\/\d+$/);
    } else t.deepEqual(puts, ['whole file']);

    const code = new URL(shareUrl).pathname.split('/').at(-1) ?? '';
    const shared = await web.api.call('GET', `/v1/shares/${code}`);
    t.is(shared.body.encryption_mode, mode);
    const list = await web.api.call('GET', '/v1/transfers?limit=20', { key: web.ws.keys.test });
    const id = list.body.data.find((tr: { short_code: string }) => tr.short_code === code)?.id;
    await waitForTransfer(web.api, web.ws.keys.test, id, (tr) => tr.status === 'active');

    await page.goto(shareUrl);
    const received = await downloadBytes(page, () =>
      page.getByRole('button', { name: `Download upload-${mode}.bin` }).click(),
    );
    t.true(received.equals(bytes));
    await page.close();
  });
}

test('an upload whose connection drops is finished by the page: lost answers and lost requests alike', async (t) => {
  const page = await web.context.newPage();
  const dropped: string[] = [];
  // The first chunk reaches the server but its answer is lost; the first whole-file PUT is lost outright.
  await page.route('**/v1/uploads/**', async (route) => {
    const request = route.request();
    if (request.method() !== 'PUT') return route.continue();
    const range = request.headers()['content-range'] ?? 'whole file';
    if (dropped.includes(range)) return route.continue();
    dropped.push(range);
    if (range !== 'whole file') await route.fetch();
    return route.abort('connectionreset');
  });
  const e2eBytes = content(9 * 1024 * 1024);
  const plainBytes = content(40_000);
  for (const [mode, bytes] of [
    ['e2e', e2eBytes],
    ['server', plainBytes],
  ] as const) {
    await page.goto(`${web.api.url}/send`);
    await page.getByLabel('API key').fill(web.ws.keys.test);
    await page.setInputFiles('#files', await filesOnDisk(t, { [`flaky-${mode}.bin`]: bytes }));
    if (mode === 'e2e') await page.getByLabel(/End to end/).check();
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('heading', { name: 'Your link is ready' }).waitFor({ timeout: 30_000 });
    const shareUrl = await page.getByLabel('Share this link').inputValue();
    const code = new URL(shareUrl).pathname.split('/').at(-1) ?? '';
    const list = await web.api.call('GET', '/v1/transfers?limit=20', { key: web.ws.keys.test });
    const id = list.body.data.find((tr: { short_code: string }) => tr.short_code === code)?.id;
    await waitForTransfer(web.api, web.ws.keys.test, id, (tr) => tr.status === 'active');
    const reader = await web.context.newPage();
    await reader.goto(shareUrl);
    const received = await downloadBytes(reader, () =>
      reader.getByRole('button', { name: `Download flaky-${mode}.bin` }).click(),
    );
    t.true(received.equals(bytes), mode);
    await reader.close();
  }
  t.is(dropped.length, 3, dropped.join(', '));
  await page.close();
});

test('the sender page explains what is missing instead of failing silently', async (t) => {
  const page = await web.context.newPage();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${web.api.url}/send`);
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'Enter your API key.' }).waitFor();
  await page.getByLabel('API key').fill('svc_test_not-a-real-key');
  await page.setInputFiles('#files', { name: 'x.txt', mimeType: 'text/plain', buffer: Buffer.from('x') });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: /key/i }).waitFor();
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 360'));
  await screenshot(page, 'send-mobile-error');
  await page.close();
});
