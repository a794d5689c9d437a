import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import test from 'ava';
import type { Page } from 'playwright-core';
import { generateIntakeKeyPair, type IntakeKem } from '../../sdk/src/crypto/intake-envelope.ts';
import { type IntakeDocument, Valise } from '../../sdk/src/index.ts';
import { eventually } from '../helpers/api.ts';
import { content } from '../helpers/transfers.ts';
import { filesOnDisk, screenshot, webSession } from './browser.ts';

// The intake page at /i/{id}, driven in Chromium: a submitter opens the link
// the owner shares (the publishable key in its fragment), drops files, and the
// page encrypts them to the owner's key before they leave; the test, as the
// owner, decrypts what was stored with the SDK and the private key it holds.

const web = webSession('Web intake');
const MARKER = 'VALISE-PAGE-SECRET';
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

async function createIntake(body: Record<string, unknown>) {
  const created = await web.api.call('POST', '/v1/intakes', { key: web.ws.keys.test, body });
  if (created.status !== 201) throw new Error(`intake: ${created.status} ${created.text}`);
  return created.body as { id: string; publishable_key: { key: string; page_url: string } };
}

/** Every PUT body the page sends, to check that none carries plaintext. */
function watchPuts(page: Page): Buffer[] {
  const bodies: Buffer[] = [];
  page.on('request', (request) => {
    if (request.method() === 'PUT') bodies.push(request.postDataBuffer() ?? Buffer.alloc(0));
  });
  return bodies;
}

async function waitForDocument(intakeId: string, ready: (doc: IntakeDocument) => boolean): Promise<IntakeDocument> {
  const owner = new Valise({ apiKey: web.ws.keys.test, baseUrl: web.api.url });
  return eventually(async () => {
    const listed = await owner.intakes.listDocuments(intakeId).firstPage();
    const doc = listed.data[0];
    return doc && ready(doc) ? owner.intakes.getDocument(intakeId, doc.id) : undefined;
  }, 60_000);
}

async function opened(doc: IntakeDocument, privateKey?: Uint8Array): Promise<Map<string, Buffer>> {
  const owner = new Valise({ apiKey: web.ws.keys.test, baseUrl: web.api.url });
  const files = new Map<string, Buffer>();
  for (const file of doc.files) {
    const stream = await owner.intakes.openFile(doc, file.id, { privateKey });
    files.set(file.name, Buffer.from(await new Response(stream).arrayBuffer()));
  }
  return files;
}

async function storedObjects(intakeId: string): Promise<Buffer[]> {
  const { client, bucket } = web.api.services.objects;
  const listed = await client.send(
    new ListObjectsV2Command({ Bucket: bucket, Prefix: `test/${web.ws.workspace_id}/intakes/${intakeId}/` }),
  );
  const blobs: Buffer[] = [];
  for (const object of listed.Contents ?? []) {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }));
    blobs.push(Buffer.from(await (got.Body?.transformToByteArray() ?? new Uint8Array())));
  }
  return blobs;
}

for (const kem of ['MLKEM768-X25519', 'DHKEM-X25519'] as const satisfies IntakeKem[]) {
  test(`a submitter sends two files through the page, encrypted to the owner's ${kem} key`, async (t) => {
    const pair = await generateIntakeKeyPair(kem);
    const intake = await createIntake({
      title: `Passport scans (${kem})`,
      instructions: 'Send a scan of each page.\nPDF or JPEG.',
      owner_public_key: { kem, public_key: b64(pair.publicKey) },
      metadata_policy: 'allow',
      limits: { max_files: 3 },
    });
    const link = intake.publishable_key.page_url;
    t.is(link, `${web.api.url}/i/${intake.id}#k=${intake.publishable_key.key}`);

    // The first file takes two 8 MiB chunks in X-Wing's run.
    const files = {
      'passport.pdf': content(kem === 'MLKEM768-X25519' ? 9 * 1024 * 1024 : 300_000, MARKER),
      'visa.jpg': content(70_000, MARKER),
    };
    const page = await web.context.newPage();
    const puts = watchPuts(page);
    const response = await page.goto(link);
    t.regex(response?.headers()['content-security-policy'] ?? '', /script-src 'self' 'sha256-[\w+/=]+'/);
    await page.getByRole('heading', { name: `Passport scans (${kem})` }).waitFor();
    await page.getByText('Send a scan of each page.').waitFor();
    t.regex((await page.locator('#encryption-note').textContent()) ?? '', new RegExp(`End-to-end encrypted.*${kem}`));
    t.regex((await page.locator('#limits').textContent()) ?? '', /Up to 3 files/);
    await page.setInputFiles('#files', await filesOnDisk(t, files));
    await page.getByLabel('Your reference').fill('CASE-7');
    await page.getByLabel('Note').fill('Both pages');
    await screenshot(page, `intake-${kem}-filled`);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('heading', { name: 'Files sent' }).waitFor({ timeout: 60_000 });
    await screenshot(page, `intake-${kem}-done`);
    for (const bar of await page.locator('#file-list progress').all()) t.is(await bar.getAttribute('value'), '1');

    t.is(puts.length, kem === 'MLKEM768-X25519' ? 3 : 2);
    for (const body of puts) t.false(body.includes(MARKER));
    const doc = await waitForDocument(intake.id, (d) => d.status === 'received');
    t.is(doc.source, 'widget');
    t.is(doc.client_reference, 'CASE-7');
    t.deepEqual(doc.metadata, { note: 'Both pages' });
    t.is(doc.encryption.kem, kem);
    const plain = await opened(doc, pair.privateKey);
    for (const [name, bytes] of Object.entries(files)) t.true(plain.get(name)?.equals(bytes), name);
    const blobs = await storedObjects(intake.id);
    t.is(blobs.length, 2);
    for (const blob of blobs) t.false(blob.includes(MARKER));
    await page.close();
  });
}

test('a server-mode intake: the page sends the files as they are and the server seals them', async (t) => {
  const intake = await createIntake({ title: 'Invoices', encryption_mode: 'server' });
  const bytes = content(150_000, MARKER);
  const page = await web.context.newPage();
  await page.goto(intake.publishable_key.page_url);
  await page.getByRole('heading', { name: 'Invoices' }).waitFor();
  t.regex((await page.locator('#encryption-note').textContent()) ?? '', /encrypts them at rest/);
  t.true(await page.locator('#note-field').isHidden());
  await page.setInputFiles('#files', { name: 'invoice.pdf', mimeType: 'application/pdf', buffer: bytes });
  await screenshot(page, 'intake-server-filled');
  // The answer to the first submission is lost after the server made the document: the page
  // retries with the same Idempotency-Key and gets that document back, not a second one.
  const idempotencyKeys: string[] = [];
  await page.route('**/v1/intakes/*/submissions', async (route) => {
    idempotencyKeys.push(route.request().headers()['idempotency-key'] ?? '');
    if (idempotencyKeys.length > 1) return route.continue();
    await route.fetch();
    return route.abort('connectionreset');
  });
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('heading', { name: 'Files sent' }).waitFor({ timeout: 30_000 });
  await screenshot(page, 'intake-server-done');
  t.is(idempotencyKeys.length, 2);
  t.regex(idempotencyKeys[0] ?? '', /^[0-9a-f-]{36}$/);
  t.is(idempotencyKeys[1], idempotencyKeys[0]);
  const listed = await web.api.call('GET', `/v1/intakes/${intake.id}/documents`, { key: web.ws.keys.test });
  t.is(listed.body.data.length, 1, 'one document for the retried submission');
  const doc = await waitForDocument(intake.id, (d) => d.status === 'available');
  t.is(doc.encryption.mode, 'server');
  t.true((await opened(doc)).get('invoice.pdf')?.equals(bytes));
  for (const blob of await storedObjects(intake.id)) t.false(blob.includes(MARKER));
  await page.close();
});

test('a lost part is retried, and after a reload the same files continue where the upload stopped', async (t) => {
  const pair = await generateIntakeKeyPair('DHKEM-X25519');
  const intake = await createIntake({
    title: 'Large scans',
    owner_public_key: { kem: 'DHKEM-X25519', public_key: b64(pair.publicKey) },
  });
  // Files on disk: choosing them again after the reload gives the same name, size and date.
  const bytes = content(17 * 1024 * 1024, MARKER);
  const path = await filesOnDisk(t, { 'archive.bin': bytes });

  const page = await web.context.newPage();
  const ranges: string[] = [];
  let lost = 0;
  // The first chunk's answer is lost once (it is stored all the same: the page must see that and
  // go on); then the connection fails for good from the third chunk on, until the reload.
  await page.route('**/v1/uploads/**', async (route) => {
    const request = route.request();
    if (request.method() !== 'PUT') return route.continue();
    const range = request.headers()['content-range'] ?? 'whole file';
    ranges.push(range);
    if (range.startsWith('bytes 0-') && lost === 0) {
      lost++;
      await route.fetch();
      return route.abort('connectionreset');
    }
    if (range.startsWith('bytes 16777216-')) return route.abort('connectionreset');
    return route.continue();
  });
  await page.goto(intake.publishable_key.page_url);
  await page.setInputFiles('#files', path);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /not all sent/ })
    .waitFor({ timeout: 60_000 });
  t.is(ranges.filter((r) => r.startsWith('bytes 0-')).length, 1, ranges.join(', '));
  t.is(ranges.filter((r) => r.startsWith('bytes 8388608-')).length, 1, ranges.join(', '));

  await page.unroute('**/v1/uploads/**');
  ranges.length = 0;
  page.on('request', (request) => {
    if (request.method() === 'PUT') ranges.push(request.headers()['content-range'] ?? 'whole file');
  });
  await page.reload();
  await page.getByText('An upload from this page was interrupted').waitFor();
  await screenshot(page, 'intake-resume');
  await page.setInputFiles('#files', path);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('heading', { name: 'Files sent' }).waitFor({ timeout: 60_000 });
  // Only the missing chunk went again.
  t.is(ranges.length, 1, ranges.join(', '));
  t.regex(ranges[0] ?? '', /^bytes 16777216-/);
  t.is(await page.evaluate('sessionStorage.length'), 0);
  const doc = await waitForDocument(intake.id, (d) => d.status === 'received');
  t.is(doc.files_count, 1);
  t.true((await opened(doc, pair.privateKey)).get('archive.bin')?.equals(bytes));
  await page.close();
});

test('the page says what is missing: no key in the link, a revoked key, too many files', async (t) => {
  const intake = await createIntake({ title: 'One file only', encryption_mode: 'server', limits: { max_files: 1 } });
  const page = await web.context.newPage();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${web.api.url}/i/${intake.id}`);
  await page.getByRole('alert').filter({ hasText: 'lacks its key' }).waitFor();
  await screenshot(page, 'intake-no-key');

  await page.goto(intake.publishable_key.page_url);
  await page.reload(); // a fragment-only navigation does not load the page again
  await page.setInputFiles('#files', [
    { name: 'a.txt', mimeType: 'text/plain', buffer: Buffer.from('a') },
    { name: 'b.txt', mimeType: 'text/plain', buffer: Buffer.from('b') },
  ]);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'Send at most 1 file.' }).waitFor();
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 360'));
  await screenshot(page, 'intake-too-many');
  const listed = await web.api.call('GET', `/v1/intakes/${intake.id}/documents`, { key: web.ws.keys.test });
  t.is(listed.body.data.length, 0);

  const keys = await web.api.call('GET', `/v1/intakes/${intake.id}/publishable-keys`, { key: web.ws.keys.test });
  t.is(keys.body.data[0].page_url, intake.publishable_key.page_url);
  await web.api.call('DELETE', `/v1/intakes/${intake.id}/publishable-keys/${keys.body.data[0].id}`, {
    key: web.ws.keys.test,
  });
  await page.reload();
  await page
    .getByRole('alert')
    .filter({ hasText: /revoked/ })
    .waitFor();
  await page.close();
});

test('the HPKE packages are served from an allow-list, their ES modules only', async (t) => {
  const status = async (path: string) => (await fetch(`${web.api.url}${path}`)).status;
  t.is(await status('/assets/vendor/hpke-core/mod.js'), 200);
  t.is(await status('/assets/vendor/mlkem/src/mlKem768.js'), 200);
  for (const refused of [
    '/assets/vendor/hpke-core/mod.d.ts',
    '/assets/vendor/hpke-core/..%2Fpackage.json',
    '/assets/vendor/hpke-core/..%2Fscript/mod.js',
    '/assets/vendor/joi/lib/index.js',
    '/assets/vendor/constructor/x.js',
    '/assets/vendor/__proto__/x.js',
  ]) {
    // Refused as not found, or (an encoded slash) as a malformed path: never served.
    t.true([400, 404].includes(await status(refused)), refused);
  }
  const page = await fetch(`${web.api.url}/i/in_${'0'.repeat(26)}`);
  t.is(page.status, 200);
  t.false((page.headers.get('content-security-policy') ?? '').includes('unsafe'));
  t.is(page.headers.get('referrer-policy'), 'no-referrer');
  t.is((await fetch(`${web.api.url}/i/not-an-intake`)).status, 400);
});
