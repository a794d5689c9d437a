import { AxeBuilder } from '@axe-core/playwright';
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { eventually } from '../helpers/api.ts';
import { content, createTransfer, put, waitForTransfer } from '../helpers/transfers.ts';
import { bytesOf, screenshot, webSession } from './browser.ts';

// The pages people use pass axe-core's WCAG 2.0 and 2.1 A and AA rules with no serious or
// critical violation, in each state a visitor meets; and a file is sent and received with the
// keyboard alone: Tab, typing, Enter and the arrows, no click (docs/web.md, "Accessibility").

const web = webSession('Web accessibility');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** axe's serious and critical findings on the page as it is now: the rule, then where. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  if (results.passes.length < 10) throw new Error(`axe passed only ${results.passes.length} rules: did it run?`);
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes
          .slice(0, 5)
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
}

async function passesAxe(t: ExecutionContext, page: Page, state: string): Promise<void> {
  t.deepEqual(await seriousViolations(page), [], state);
  await screenshot(page, `a11y-${state}`);
}

async function open(url: string): Promise<Page> {
  const page = await web.context.newPage();
  const response = await page.goto(url);
  if (!response?.ok()) throw new Error(`GET ${url}: ${response?.status()}`);
  return page;
}

async function call(method: string, path: string, body?: unknown) {
  const answer = await web.api.call(method, path, { key: web.ws.keys.test, ...(body === undefined ? {} : { body }) });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return answer.body;
}

async function activeTransfer(body: Record<string, unknown>, files: Record<string, Buffer>) {
  const created = await createTransfer(web.api, web.ws.keys.test, {
    ...body,
    files: Object.entries(files).map(([name, bytes]) => ({ name, size: bytes.length })),
  });
  for (const [i, bytes] of Object.values(files).entries()) await put(created.upload_urls[i]?.url ?? '', bytes);
  await waitForTransfer(web.api, web.ws.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  return created;
}

type Focused = { id: string; name: string; outlined: boolean };

/**
 * What has the keyboard focus: its id, its name (aria-label, label or text) and whether a focus
 * outline shows, on it or, for the drop zone's hidden file input, on the zone. (A string: the
 * tests are type-checked without the DOM's types.)
 */
const focused = (page: Page): Promise<Focused> =>
  page.evaluate(`(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return { id: '', name: '', outlined: false };
    const style = getComputedStyle(element.closest('.drop-zone') ?? element);
    const name = element.getAttribute('aria-label') ?? element.labels?.[0]?.textContent ?? element.textContent ?? '';
    return {
      id: element.id,
      name: name.trim().replace(/\\s+/g, ' '),
      outlined: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2,
    };
  })()`);

/** Presses Tab until the focused element matches, checking that every stop on the way shows its focus. */
async function tabTo(t: ExecutionContext, page: Page, matches: (f: { id: string; name: string }) => boolean) {
  for (let presses = 0; presses < 25; presses++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    t.true(now.outlined, `no visible focus on #${now.id} "${now.name}"`);
    if (matches(now)) return;
  }
  throw new Error('Tab never reached the control');
}

test('the sender page, empty, with an error and with a file chosen', async (t) => {
  const page = await open(`${web.api.url}/send`);
  await passesAxe(t, page, 'send');
  await page.getByRole('button', { name: 'Upload', exact: true }).press('Enter');
  await page.getByRole('alert').filter({ hasText: 'Enter your API key.' }).waitFor();
  await page.setInputFiles('#files', { name: 'plan.pdf', mimeType: 'application/pdf', buffer: content(2000) });
  await page.getByText('Options').press('Enter');
  await passesAxe(t, page, 'send-error-options');
  await page.close();
});

test('the share page, open and behind a password, and the collection page', async (t) => {
  const files = { 'report.pdf': content(3000), 'notes.txt': content(200) };
  const open1 = await activeTransfer({ transfer_title: 'Quarter close' }, files);
  const locked = await activeTransfer(
    { transfer_title: 'Private', password: 'correct horse' },
    { 'a.txt': content(10) },
  );
  let page = await open(open1.share_url);
  await page.getByRole('button', { name: /Download all/ }).waitFor();
  await passesAxe(t, page, 'share');
  await page.close();

  page = await open(locked.share_url);
  await passesAxe(t, page, 'share-locked');
  await page.getByLabel('Password').fill('wrong');
  await page.getByLabel('Password').press('Enter');
  await page
    .getByRole('alert')
    .filter({ hasText: /password/i })
    .waitFor();
  await passesAxe(t, page, 'share-wrong-password');
  await page.close();

  // A state instead of files: the transfer is still uploading.
  const waiting = await createTransfer(web.api, web.ws.keys.test, { files: [{ name: 'later.bin', size: 10 }] });
  page = await open(waiting.share_url);
  await page.getByRole('heading', { name: 'Still uploading' }).waitFor();
  await passesAxe(t, page, 'share-uploading');
  await page.close();

  const collection = await call('POST', '/v1/collections', {
    title: 'Launch kit',
    transfer_ids: [open1.transfer.id, locked.transfer.id],
  });
  page = await open(collection.share_url);
  await passesAxe(t, page, 'collection');
  await page.close();
});

test('the intake page and the vault page', async (t) => {
  const intake = await call('POST', '/v1/intakes', {
    title: 'Passport scans',
    instructions: 'Send each page.',
    encryption_mode: 'server',
  });
  let page = await open(intake.publishable_key.page_url);
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
  await passesAxe(t, page, 'intake');
  await page.close();

  const coffre = await call('POST', '/v1/coffres', { name: 'Board papers', description: 'For the March meeting' });
  const item = await call('POST', `/v1/coffres/${coffre.id}/items`, { name: 'minutes.pdf', size: 2000 });
  await put(item.upload_url.url, content(2000));
  await eventually(async () => {
    const got = await call('GET', `/v1/coffres/${coffre.id}/items/${item.item.id}`);
    return got.status === 'available' ? true : undefined;
  }, 60_000);
  for (const access of ['download', 'upload']) {
    const member = await call('POST', `/v1/coffres/${coffre.id}/members`, {
      email: `${access}-${Date.now()}@valise.test`,
      access,
    });
    page = await open(member.invitation_url);
    await page.getByText('minutes.pdf').waitFor();
    await passesAxe(t, page, `coffre-${access}`);
    await page.close();
  }
});

test('the documentation: its index, a guide, the errors and the API reference', async (t) => {
  for (const [path, state] of [
    ['/docs', 'docs-index'],
    ['/docs/transfers', 'docs-guide'],
    ['/docs/errors', 'docs-errors'],
    ['/docs/reference', 'docs-reference'],
  ] as const) {
    const page = await open(`${web.api.url}${path}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await passesAxe(t, page, state);
    await page.close();
  }
});

test('with the keyboard alone, a sender sends a file end to end and the recipient downloads it', async (t) => {
  const bytes = content(120_000);
  const page = await open(`${web.api.url}/send`);
  await tabTo(t, page, (f) => f.id === 'api-key');
  await page.keyboard.type(web.ws.keys.test);
  // Asked for well before the key press: Playwright starts intercepting the picker asynchronously.
  const choosing = page.waitForEvent('filechooser');
  await tabTo(t, page, (f) => f.id === 'files');
  await page.keyboard.press('Enter');
  const chooser = await choosing;
  await chooser.setFiles({ name: 'keyboard.bin', mimeType: 'application/octet-stream', buffer: bytes });
  await page.getByText('keyboard.bin').waitFor();
  // The encryption choice is a radio group: Tab reaches the chosen one, an arrow moves the choice.
  await tabTo(t, page, (f) => f.name.startsWith('Server'));
  await page.keyboard.press('ArrowDown');
  t.true(await page.getByLabel(/End to end/).isChecked());
  await tabTo(t, page, (f) => f.id === 'send');
  await page.keyboard.press('Enter');
  const heading = page.getByRole('heading', { name: 'Your link is ready' });
  await heading.waitFor({ timeout: 30_000 });
  t.is((await focused(page)).id, 'done-title', 'the result takes the focus');
  await passesAxe(t, page, 'send-done');
  const shareUrl = await page.getByLabel('Share this link').inputValue();
  t.true(shareUrl.includes('#k='));
  const code = new URL(shareUrl).pathname.split('/').at(-1);
  const listed = await call('GET', '/v1/transfers?limit=20');
  const id = listed.data.find((tr: { short_code: string }) => tr.short_code === code)?.id;
  await waitForTransfer(web.api, web.ws.keys.test, id, (tr) => tr.status === 'active');
  await page.close();

  const reader = await open(shareUrl);
  await reader.getByRole('button', { name: 'Download keyboard.bin' }).and(reader.locator(':enabled')).waitFor();
  await tabTo(t, reader, (f) => f.name === 'Download keyboard.bin');
  const [download] = await Promise.all([
    reader.waitForEvent('download', { timeout: 30_000 }),
    reader.keyboard.press('Enter'),
  ]);
  t.true((await bytesOf(download)).equals(bytes));
  await reader.close();
});

test('with the keyboard alone, a recipient unlocks a share behind a password and downloads its file', async (t) => {
  const bytes = content(50_000);
  const created = await activeTransfer({ password: 'correct horse' }, { 'locked.bin': bytes });
  const page = await open(created.share_url);
  await tabTo(t, page, (f) => f.id === 'password');
  await page.keyboard.type('correct horse');
  await page.keyboard.press('Enter');
  const button = page.getByRole('button', { name: 'Download locked.bin' });
  await button.waitFor();
  await tabTo(t, page, (f) => f.name === 'Download locked.bin');
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 30_000 }),
    page.keyboard.press('Enter'),
  ]);
  t.true((await bytesOf(download)).equals(bytes));
  await page.close();
});
