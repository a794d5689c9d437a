import { mkdir, readFile } from 'node:fs/promises';
import { type Browser, chromium, type Download, type Page } from 'playwright-core';

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
