import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { type Browser, type BrowserContext, chromium, type Download, type Page } from 'playwright-core';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';

// Debian's Chromium driven by playwright-core (scripts/setup.sh installs it).
// Tests run as root, hence --no-sandbox. Screenshots go to test/artifacts/.

export const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;

export async function launchBrowser(): Promise<Browser> {
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}web-${name}.png`, fullPage: true });
}

/** Runs `action` and returns the bytes of the download it starts. */
export async function downloadBytes(page: Page, action: () => Promise<unknown>): Promise<Buffer> {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30_000 }), action()]);
  return bytesOf(download);
}

export async function bytesOf(download: Download): Promise<Buffer> {
  const failure = await download.failure();
  if (failure) throw new Error(`download failed: ${failure}`);
  return readFile(await download.path());
}

/**
 * Writes `files` to a directory removed after the test and returns their paths, for
 * setInputFiles. Playwright sends a buffer's bytes to the page over the browser protocol, which
 * for megabytes on a loaded machine has taken longer than setInputFiles' 30 s; a path is handed
 * to Chromium as it is. Files on disk also keep their name, size and date when chosen again.
 */
export async function filesOnDisk(t: ExecutionContext, files: Record<string, Uint8Array>): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'valise-web-files-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const paths = [];
  for (const [name, bytes] of Object.entries(files)) {
    paths.push(join(dir, name));
    await writeFile(join(dir, name), bytes);
  }
  return paths;
}

export type WebSession = { api: TestApi; ws: TestWorkspace; browser: Browser; context: BrowserContext };

/**
 * A test file's server, workspace and Chromium context (downloads accepted), started before its
 * tests and closed after them. A page load fetches a handful of assets: the per-address public
 * budget is kept out of the way.
 */
export function webSession(workspaceName: string, env: Record<string, string> = {}): WebSession {
  const session = {} as WebSession;
  test.before(async () => {
    session.api = await startApi({ RATE_LIMIT_PUBLIC: '100000', ...env });
    session.ws = await session.api.workspace(workspaceName);
    session.browser = await launchBrowser();
    session.context = await session.browser.newContext({ acceptDownloads: true });
  });
  test.after.always(async () => {
    await session.context?.close();
    await session.browser?.close();
    await session.api?.close();
  });
  return session;
}
