import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import test from 'ava';
import { build } from 'esbuild';
import { PART_PLAINTEXT } from '../../lib/uploads/parts.ts';
import { content, createTransfer, fetchBytes, links, waitForTransfer } from '../helpers/transfers.ts';
import { screenshot, webSession } from './browser.ts';

// Uppy (core, Dashboard, tus plugin), bundled by esbuild from node_modules for a page served on
// another origin than the API, uploads a transfer's files to their upload URLs over tus in
// Chromium: the CORS preflights, POST (creation) and PATCH a browser sends, and the files download
// identical.

const web = webSession('Uppy');
let page: { server: Server; url: string };

const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Uppy to Valise</title>
<link rel="stylesheet" href="/page.css"></head>
<body><main><h1>Send files</h1><div id="uploader"></div></main><script src="/page.js"></script></body></html>`;

test.before(async () => {
  const bundle = await build({
    entryPoints: [new URL('../fixtures/uppy/page.js', import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    outdir: '/bundle',
    logLevel: 'silent',
  });
  const assets = new Map<string, { type: string; body: Uint8Array }>([
    ['/', { type: 'text/html; charset=utf-8', body: Buffer.from(PAGE_HTML) }],
  ]);
  for (const file of bundle.outputFiles) {
    const type = file.path.endsWith('.css') ? 'text/css' : 'text/javascript';
    assets.set(`/${basename(file.path)}`, { type, body: file.contents });
  }
  // CSS imported by the entry (Uppy's styles, when it imports them) comes out as page.css; none is fine too.
  if (!assets.has('/page.css')) assets.set('/page.css', { type: 'text/css', body: Buffer.alloc(0) });
  const server = createServer((request, response) => {
    const asset = assets.get(new URL(request.url ?? '/', 'http://page').pathname);
    if (!asset) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': asset.type }).end(asset.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  page = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
test.after.always(() => page?.server.close());

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

test("Uppy's Dashboard and tus plugin upload a transfer's files cross-origin, and they download identical", async (t) => {
  const files = [
    { name: 'notes.txt', bytes: content(150_000), mimeType: 'text/plain' },
    { name: 'footage.bin', bytes: content(PART_PLAINTEXT + 5000), mimeType: 'application/octet-stream' },
  ];
  const created = await createTransfer(web.api, web.ws.keys.test, {
    files: files.map((file) => ({ name: file.name, size: file.bytes.length, mime_type: file.mimeType })),
    transfer_title: 'Sent with Uppy',
  });
  const uploadUrls = Object.fromEntries(created.upload_urls.map((entry) => [entry.name, entry.url]));
  t.not(new URL(page.url).origin, new URL(web.api.url).origin, 'the page is on another origin than the API');

  const tab = await web.context.newPage();
  const sent: string[] = [];
  tab.on('request', (request) => {
    if (request.url().includes('/v1/uploads/')) sent.push(request.method());
  });
  const failures: string[] = [];
  tab.on('console', (message) => {
    if (message.type() === 'error') failures.push(message.text());
  });
  await tab.goto(`${page.url}/?upload_urls=${encodeURIComponent(JSON.stringify(uploadUrls))}`);
  await tab
    .locator('input.uppy-Dashboard-input[type=file]')
    .first()
    .setInputFiles(files.map((file) => ({ name: file.name, mimeType: file.mimeType, buffer: file.bytes })));
  await tab.getByText('footage.bin').first().waitFor();
  await screenshot(tab, 'uppy-ready');
  await tab.locator('.uppy-StatusBar-actionBtn--upload').click();
  await tab.waitForFunction(() => (globalThis as { uploadResult?: unknown }).uploadResult !== undefined, null, {
    timeout: 60_000,
  });
  const result = (await tab.evaluate(() => (globalThis as { uploadResult?: unknown }).uploadResult)) as {
    successful: Array<{ name: string; url: string }>;
    failed: Array<{ name: string; error: string }>;
  };
  await screenshot(tab, 'uppy-done');
  t.deepEqual(result.failed, [], failures.join('\n'));
  t.deepEqual(
    Object.fromEntries(result.successful.map((file) => [file.name, file.url])),
    uploadUrls,
    "each file's tus Location is its own upload URL",
  );
  t.true(sent.includes('POST') && sent.includes('PATCH'), sent.join(' '));
  t.false(sent.includes('PUT'));

  await waitForTransfer(web.api, web.ws.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  const unlocked = await links(web.api, created.transfer.short_code);
  for (const file of files) {
    const link = unlocked.body.files.find((f: { name: string }) => f.name === file.name);
    t.is(sha256((await fetchBytes(link.download_url)).bytes), sha256(file.bytes), file.name);
  }
  await tab.close();
});
