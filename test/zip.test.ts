import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import test from 'ava';
import { z } from 'zod';
import { createEncryptStream } from '../lib/crypto/segmented-aead.ts';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, put, waitForTransfer } from './helpers/transfers.ts';
import { checkZip } from './helpers/zip.ts';

// "Download all as ZIP" (docs/transfers.md) end to end: the owner's archive with an API key, a
// share link's and a collection link's archive links, each checked by unzip -t and Python's
// zipfile against the bytes uploaded.

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'valise-zip-api-'));

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Archives');
});
test.after.always(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

const key = () => ws.keys.live;
const call = (method: string, path: string, body?: unknown, k: string | undefined = key()) =>
  api.call(method, path, { key: k, ...(body === undefined ? {} : { body }) });
const downloadsOf = (id: string) =>
  api.services.db.oneFirst(sql.type(z.object({ total_downloads: z.number() }))`
    SELECT total_downloads FROM transfers WHERE id = ${id}`);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

type File = { name: string; bytes: Buffer };

async function activeTransfer(body: Record<string, unknown>, files: File[]) {
  const created = await createTransfer(api, key(), {
    ...body,
    files: files.map((f) => ({ name: f.name, size: f.bytes.length })),
  });
  for (const [i, file] of files.entries()) {
    const sent = await put(created.upload_urls[i]?.url ?? '', file.bytes);
    if (sent.status !== 200) throw new Error(`upload: ${sent.status} ${JSON.stringify(sent.body)}`);
  }
  await waitForTransfer(api, key(), created.transfer.id, (tr) => tr.status === 'active', 120_000);
  return created;
}

/** The archive as unzip -t and Python read it: its entries' names and SHA-256. */
async function readZip(t: { true: (v: boolean, m?: string) => void }, bytes: Buffer): Promise<Record<string, string>> {
  const path = join(dir, `${randomBytes(6).toString('hex')}.zip`);
  writeFileSync(path, bytes);
  const check = await checkZip(path);
  t.true(check.unzipOk, check.unzipOutput);
  t.true(check.bad === null, `zipfile found a bad entry: ${check.bad}`);
  return check.entries;
}

const expected = (files: File[], folder = '') =>
  Object.fromEntries(files.map((f) => [`${folder}${f.name}`, sha(f.bytes)]));

async function getArchive(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

const threeFiles = (): File[] => [
  { name: 'report.pdf', bytes: content(MiB + 17) },
  { name: 'Café — 写真.jpg', bytes: content(200_003) },
  { name: 'empty.txt', bytes: Buffer.alloc(0) },
];

test('the owner downloads a 3-file transfer as one ZIP: unzip -t accepts it, every entry byte-identical; audited; isolated', async (t) => {
  const files = threeFiles();
  const created = await activeTransfer({ transfer_title: 'Board pack' }, files);
  const path = `/v1/transfers/${created.transfer.id}/archive`;
  const response = await getArchive(`${api.url}${path}`, { authorization: `Bearer ${key()}` });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/zip');
  t.is(Number(response.headers.get('content-length')), response.bytes.length, 'the length was known ahead');
  t.regex(response.headers.get('content-disposition') ?? '', /filename="Board pack\.zip"/);
  t.deepEqual(await readZip(t, response.bytes), expected(files));

  const audit = await call('GET', `/v1/audit?action=transfer.archive_download`);
  t.is(audit.status, 200, audit.text);
  t.true(
    audit.body.data.some((e: { resource_id: string }) => e.resource_id === created.transfer.id),
    audit.text,
  );

  // Another workspace, and this workspace's test environment: no such transfer.
  const other = await api.workspace('Archives elsewhere');
  for (const k of [other.keys.live, ws.keys.test]) {
    const refused = await call('GET', path, undefined, k);
    t.is(refused.status, 404, refused.text);
    t.is(refused.body.error.code, 'not_found');
  }
  t.is((await api.call('GET', path)).status, 401);
  const readless = await ws.mintKey({ name: 'no read', key_type: 'restricted', scopes: ['transfers:write'] });
  t.is((await call('GET', path, undefined, readless.key)).status, 403);
});

test('an end-to-end transfer has no server archive: 409 end_to_end, for the owner and the share link', async (t) => {
  const plaintext = content(4096);
  const blob = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key: randomBytes(32), plaintextSize: plaintext.length })),
  );
  const created = await activeTransfer({ encryption_mode: 'e2e' }, [{ name: 'sealed.bin', bytes: blob }]);
  const owner = await call('GET', `/v1/transfers/${created.transfer.id}/archive`);
  t.is(owner.status, 409, owner.text);
  t.is(owner.body.error.reason, 'end_to_end');
  const shared = await api.call('POST', `/v1/shares/${created.transfer.short_code}/archive-link`);
  t.is(shared.status, 409);
  t.is(shared.body.error.reason, 'end_to_end');
  const view = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
  t.is(view.body.downloads_remaining, null);
  t.is(await downloadsOf(created.transfer.id), 0, 'refused before any download was counted');
});

test('a share link archive: counted once, streams the ZIP once, then is spent; password, limit and expiry hold', async (t) => {
  const files = threeFiles();
  const created = await activeTransfer({ transfer_title: 'Shared pack', max_downloads: 2 }, files);
  const code = created.transfer.short_code;
  const issued = await api.call('POST', `/v1/shares/${code}/archive-link`);
  t.is(issued.status, 200, issued.text);
  t.like(issued.body, {
    object: 'archive_link',
    filename: 'Shared pack.zip',
    total_downloads: 1,
    archive_expires_in: 300,
  });
  const archive = await getArchive(issued.body.archive_url);
  t.is(archive.status, 200);
  t.is(archive.bytes.length, issued.body.size);
  t.is(archive.headers.get('x-content-type-options'), 'nosniff');
  t.deepEqual(await readZip(t, archive.bytes), expected(files));
  const again = await getArchive(issued.body.archive_url);
  t.is(again.status, 403);
  t.is(JSON.parse(again.bytes.toString()).error.reason, 'link_used');

  // The second download reaches max_downloads; a third is refused.
  t.is((await api.call('POST', `/v1/shares/${code}/archive-link`)).status, 200);
  const third = await api.call('POST', `/v1/shares/${code}/archive-link`);
  t.is(third.status, 403);
  t.is(third.body.error.reason, 'limit_reached');

  // A forged or mangled token.
  t.is(
    (await getArchive(`${api.url}/v1/archives/${issued.body.archive_url.split('/').pop().replace(/^./, 'x')}`)).status,
    404,
  );

  const locked = await activeTransfer({ transfer_title: 'Locked', password: 'correct horse battery' }, [
    { name: 'a.txt', bytes: content(1000) },
  ]);
  const lockedCode = locked.transfer.short_code;
  t.is((await api.call('POST', `/v1/shares/${lockedCode}/archive-link`)).status, 403);
  t.is(
    (await api.call('POST', `/v1/shares/${lockedCode}/archive-link`, { body: { password: 'wrong guess!' } })).status,
    403,
  );
  const unlocked = await api.call('POST', `/v1/shares/${lockedCode}/archive-link`, {
    body: { password: 'correct horse battery' },
  });
  t.is(unlocked.status, 200, unlocked.text);
  // Expired after the link was issued: the link stops with it.
  await api.services.db.query(sql.typeAlias('void')`
    UPDATE transfers SET expires_at = now() - interval '1 second' WHERE id = ${locked.transfer.id}`);
  const expired = await getArchive(unlocked.body.archive_url);
  t.is(expired.status, 410);
  t.is(
    (await api.call('POST', `/v1/shares/${lockedCode}/archive-link`, { body: { password: 'correct horse battery' } }))
      .status,
    410,
  );
});

/** Reads the start of a download, then closes the socket mid-body. */
function abortAfterFirstBytes(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}`));
      response.once('data', () => {
        request.destroy();
        resolve();
      });
    });
    request.on('error', () => undefined);
    request.end();
  });
}

test.serial(
  "through a recipient's personal link, an archive counts the recipient's download only once it completes",
  async (t) => {
    const files: File[] = [
      { name: 'one.bin', bytes: content(12 * MiB) },
      { name: 'two.bin', bytes: content(12 * MiB + 5) },
    ];
    const created = await activeTransfer({ transfer_title: 'For Ann', recipients: ['ann-zip@valise.test'] }, files);
    const recipients = async () =>
      (await call('GET', `/v1/transfers/${created.transfer.id}/recipients`)).body.data as {
        share_url: string;
        downloads_completed: number;
        files_downloaded: string[];
      }[];
    const personal = new URL((await recipients())[0]?.share_url ?? '').pathname.split('/').pop() ?? '';

    const first = await api.call('POST', `/v1/shares/${personal}/archive-link`);
    t.is(first.status, 200, first.text);
    await abortAfterFirstBytes(first.body.archive_url);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.is((await recipients())[0]?.downloads_completed, 0, 'an archive cut short counts nothing');

    const second = await api.call('POST', `/v1/shares/${personal}/archive-link`);
    const archive = await getArchive(second.body.archive_url);
    t.deepEqual(await readZip(t, archive.bytes), expected(files));
    const after = await eventually(async () => {
      const [ann] = await recipients();
      return ann && ann.downloads_completed === 1 ? ann : undefined;
    });
    t.is(after.files_downloaded.length, 2);
  },
);

test('a shared collection downloads as one ZIP: a folder per transfer, open and unlocked ones, never end-to-end ones', async (t) => {
  const openFiles = threeFiles();
  const lockedFiles: File[] = [{ name: 'secret.txt', bytes: content(5000) }];
  const plaintext = content(2048);
  const blob = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key: randomBytes(32), plaintextSize: plaintext.length })),
  );
  const [open, locked, sealed] = await Promise.all([
    activeTransfer({ transfer_title: 'Open' }, openFiles),
    activeTransfer({ transfer_title: 'Locked', password: 'correct horse battery' }, lockedFiles),
    activeTransfer({ transfer_title: 'Sealed', encryption_mode: 'e2e' }, [{ name: 's.bin', bytes: blob }]),
  ]);
  const collection = await call('POST', '/v1/collections', {
    title: 'Launch',
    transfer_ids: [open.transfer.id, locked.transfer.id, sealed.transfer.id],
  });
  t.is(collection.status, 201, collection.text);
  const code = new URL(collection.body.share_url).pathname.split('/').pop() ?? '';

  const withoutPassword = await api.call('POST', `/v1/shared-collections/${code}/archive-link`);
  t.is(withoutPassword.status, 200, withoutPassword.text);
  t.is(withoutPassword.body.filename, 'Launch.zip');
  t.deepEqual(
    await readZip(t, (await getArchive(withoutPassword.body.archive_url)).bytes),
    expected(openFiles, 'Open/'),
  );

  const all = await api.call('POST', `/v1/shared-collections/${code}/archive-link`, {
    body: { passwords: { [locked.transfer.id]: 'correct horse battery' } },
  });
  t.is(all.status, 200, all.text);
  const archive = await getArchive(all.body.archive_url);
  t.is(archive.bytes.length, all.body.size);
  t.deepEqual(await readZip(t, archive.bytes), {
    ...expected(openFiles, 'Open/'),
    ...expected(lockedFiles, 'Locked/'),
  });
  t.deepEqual(
    await Promise.all([open, locked, sealed].map((c) => downloadsOf(c.transfer.id))),
    [2, 1, 0],
    'one download of each transfer per archive link',
  );

  const wrong = await api.call('POST', `/v1/shared-collections/${code}/archive-link`, {
    body: { passwords: { [locked.transfer.id]: 'not the password' } },
  });
  t.is(wrong.status, 403);
  t.is((await api.call('POST', '/v1/shared-collections/nosuchcode123/archive-link')).status, 404);
});

test('approval gates the share archive as it gates download links; the owner may fetch it meanwhile', async (t) => {
  const files: File[] = [
    { name: 'a.txt', bytes: content(1000) },
    { name: 'b.txt', bytes: content(2000) },
  ];
  const created = await activeTransfer({ transfer_title: 'Needs approval', approval_required: true }, files);
  const code = created.transfer.short_code;
  const waiting = await api.call('POST', `/v1/shares/${code}/archive-link`);
  t.is(waiting.status, 403);
  t.is(waiting.body.error.reason, 'awaiting_approval');
  const own = await getArchive(`${api.url}/v1/transfers/${created.transfer.id}/archive`, {
    authorization: `Bearer ${key()}`,
  });
  t.is(own.status, 200);
  t.deepEqual(await readZip(t, own.bytes), expected(files));
  t.is(await downloadsOf(created.transfer.id), 0, "the owner's archive counts no download");
  t.is((await call('POST', `/v1/transfers/${created.transfer.id}/approve`, { decision: 'approved' })).status, 200);
  const approved = await api.call('POST', `/v1/shares/${code}/archive-link`);
  t.is(approved.status, 200, approved.text);
  t.deepEqual(await readZip(t, (await getArchive(approved.body.archive_url)).bytes), expected(files));
});
