import net from 'node:net';
import test from 'ava';
import { eventually } from '../helpers/api.ts';
import { content, createTransfer } from '../helpers/transfers.ts';
import { webSession } from './browser.ts';

// The sender page when the API is receiving all the uploads it takes at once (docs/transfers.md,
// "Concurrent uploads"): its PUT gets 429 with Retry-After, and the page waits for a place.

const web = webSession('Web upload slots', { UPLOADS_MAX: '1' });

test('the sender page waits for an upload slot (429 with Retry-After) and finishes once one is free', async (t) => {
  // Another upload, stalled, holds the process's one slot.
  const other = await createTransfer(web.api, web.ws.keys.test, { files: [{ name: 'held.bin', size: 1_000_000 }] });
  const target = new URL(other.upload_urls[0]?.url ?? '');
  const holder = net.connect({ host: target.hostname, port: Number(target.port) });
  holder.on('error', () => {});
  t.teardown(() => holder.destroy());
  holder.write(
    `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\nxyz`,
  );
  await eventually(async () => (web.api.services.uploads.active() === 1 ? true : undefined), 10_000, 25);

  const page = await web.context.newPage();
  const statuses: number[] = [];
  page.on('response', (response) => {
    if (response.request().method() === 'PUT') statuses.push(response.status());
  });
  await page.goto(`${web.api.url}/send`);
  await page.getByLabel('API key').fill(web.ws.keys.test);
  await page.setInputFiles('#files', {
    name: 'waits.bin',
    mimeType: 'application/octet-stream',
    buffer: content(50_000),
  });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await eventually(async () => (statuses.includes(429) ? true : undefined), 15_000, 50);
  holder.destroy();
  await page.getByRole('heading', { name: 'Your link is ready' }).waitFor({ timeout: 30_000 });
  t.is(statuses.at(-1), 200);
  await page.close();
});
