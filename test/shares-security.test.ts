import { createHash } from 'node:crypto';
import { request } from 'node:http';
import test from 'ava';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// The public side of a share link: password guessing, what the view shows
// before the password and after the end, download links used once, the
// headers of downloads, and error text that never leaves the server.

const PASSWORD = 'correct horse battery';

let api: TestApi;
let ws: TestWorkspace;
/** Wrong passwords: 3 per address and link, 4 per link across addresses, per 15 minutes. */
let guarded: TestApi;
let guardedWs: TestWorkspace;

test.before(async () => {
  [api, guarded] = await Promise.all([
    // The tests of this file download side by side from one address; the bounds on concurrent
    // downloads (test/slow-clients.test.ts) must not be what refuses them here.
    startApi({ DOWNLOADS_PER_IP: '64', DOWNLOADS_PER_TRANSFER: '64' }),
    startApi({ PASSWORD_ATTEMPTS_PER_15_MIN: '3', PASSWORD_LINK_ATTEMPTS_PER_15_MIN: '4' }),
  ]);
  [ws, guardedWs] = await Promise.all([api.workspace('Shares'), guarded.workspace('Guarded shares')]);
});
test.after.always(() => Promise.all([api?.close(), guarded?.close()]));

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function activeTransfer(
  target: TestApi,
  key: string,
  body: Record<string, unknown> = {},
  bytes = content(4096),
  file: { name?: string; mime_type?: string } = {},
) {
  const created = await createTransfer(target, key, {
    files: [
      { name: file.name ?? 'file.bin', size: bytes.length, mime_type: file.mime_type ?? 'application/octet-stream' },
    ],
    ...body,
  });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(target, key, created.transfer.id, (tr) => tr.status === 'active');
  return created;
}

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: any };

/** A request sent from a chosen loopback source address: how two clients are told apart without a proxy. */
function callFrom(localAddress: string, method: string, url: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      {
        method,
        localAddress,
        agent: false,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = text;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed });
        });
      },
    );
    sent.on('error', reject);
    sent.end(payload);
  });
}

const guess = (address: string, code: string, password: string) =>
  callFrom(address, 'POST', `${guarded.url}/v1/shares/${code}/download-links`, { password });

// ---- 1. Share passwords ----

test('20 parallel wrong passwords from one address: only the limit (3) are evaluated, the rest get 429 with Retry-After', async (t) => {
  const created = await activeTransfer(guarded, guardedWs.keys.live, { password: PASSWORD });
  const code = created.transfer.short_code;
  const answers = await Promise.all(Array.from({ length: 20 }, () => guess('127.0.0.2', code, 'not the password')));
  const statuses = answers.map((a) => a.status);
  t.is(statuses.filter((s) => s === 403).length, 3, `statuses: ${statuses.join(',')}`);
  t.is(statuses.filter((s) => s === 429).length, 17, `statuses: ${statuses.join(',')}`);
  for (const limited of answers.filter((a) => a.status === 429)) {
    t.is(limited.body.error.code, 'rate_limited');
    const wait = Number(limited.headers['retry-after']);
    t.true(wait >= 1 && wait <= 900, `Retry-After ${limited.headers['retry-after']}`);
  }
  const failed = await createEventQueries(guarded.services.db).listByType(
    { workspaceId: guardedWs.workspace_id, environment: 'live' },
    'transfer.password_failed',
  );
  t.is(failed.filter((e) => (e.data.transfer as { id: string }).id === created.transfer.id).length, 3);
});

test('an address locked out of a link does not lock out another address that has the password', async (t) => {
  const created = await activeTransfer(guarded, guardedWs.keys.live, { password: PASSWORD });
  const code = created.transfer.short_code;
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await guess('127.0.0.3', code, 'a wrong guess')).status);
  t.deepEqual(statuses, [403, 403, 403, 429]);
  t.is((await guess('127.0.0.3', code, PASSWORD)).status, 429, 'the locked address stays locked for the window');
  const recipient = await guess('127.0.0.4', code, PASSWORD);
  t.is(recipient.status, 200, JSON.stringify(recipient.body));
  t.is(recipient.body.files.length, 1);
});

test('past the link-wide ceiling, addresses that failed are refused while one that never failed is still heard', async (t) => {
  const created = await activeTransfer(guarded, guardedWs.keys.live, { password: PASSWORD });
  const code = created.transfer.short_code;
  // Two addresses use up the link's 4 wrong passwords, 2 each: below their own limit of 3.
  for (const address of ['127.0.0.5', '127.0.0.6'])
    for (let i = 0; i < 2; i++) t.is((await guess(address, code, 'wrong again')).status, 403);
  const slowed = await guess('127.0.0.5', code, 'wrong again');
  t.is(slowed.status, 429, 'an address that already failed waits for the window once the link is at its ceiling');
  t.truthy(slowed.headers['retry-after']);
  t.is((await guess('127.0.0.7', code, 'first try, wrong')).status, 403, 'a fresh address gets its guess evaluated');
  t.is((await guess('127.0.0.8', code, PASSWORD)).status, 200, 'the recipient who has not failed is never refused');
});

test('a password of 8 characters or more is accepted; shorter ones, one repeated character or a run are refused', async (t) => {
  const file = [{ name: 'a.bin', size: 10 }];
  for (const password of ['x', 'secret', 'seven c', 'aaaaaaaaaaaa', '12345678', 'abcdefghij', '87654321']) {
    const refused = await api.call('POST', '/v1/transfers', { key: ws.keys.live, body: { files: file, password } });
    t.is(refused.status, 400, password);
    t.is(refused.body.error.code, 'validation_error', password);
    t.is(refused.body.error.param, 'password', password);
  }
  // Ordinary passwords a client following the spec sends: 8 characters, few distinct ones, no rule of composition.
  for (const password of ['hunter22', 'Sunflower', 'abababababab', 'pässwört', '11112222']) {
    const accepted = await api.call('POST', '/v1/transfers', { key: ws.keys.live, body: { files: file, password } });
    t.is(accepted.status, 201, `${password}: ${accepted.text}`);
  }
});

// ---- 2. What the share view shows ----

test('before the password, a protected share shows no title, file names, sizes, types or checksums', async (t) => {
  const bytes = content(1234);
  const created = await activeTransfer(
    api,
    ws.keys.live,
    { password: PASSWORD, transfer_title: 'Merger terms', max_downloads: 3 },
    bytes,
    { name: 'acquisition-terms.pdf', mime_type: 'application/pdf' },
  );
  const code = created.transfer.short_code;
  const leaks = (text: string) =>
    ['Merger terms', 'acquisition-terms', 'application/pdf', sha256(bytes), '1234', '1.2 KiB'].filter((s) =>
      text.includes(s),
    );

  const view = await api.call('GET', `/v1/shares/${code}`);
  t.is(view.status, 200);
  t.true(view.body.password_required);
  t.true(view.body.available);
  t.truthy(view.body.expires_at);
  t.deepEqual(leaks(view.text), [], view.text);
  const json = await api.call('GET', `/t/${code}`, { headers: { accept: 'application/json' } });
  t.deepEqual(leaks(json.text), [], json.text);
  const html = await api.call('GET', `/t/${code}`, { headers: { accept: 'text/html' } });
  t.is(html.status, 200);
  t.deepEqual(leaks(html.text), []);
  t.true(html.text.includes('type="password"'));

  const wrong = await api.call('POST', `/v1/shares/${code}/unlock`, { body: { password: 'not the password' } });
  t.is(wrong.status, 403);
  t.deepEqual(leaks(wrong.text), []);
  const unlocked = await api.call('POST', `/v1/shares/${code}/unlock`, { body: { password: PASSWORD } });
  t.is(unlocked.status, 200, unlocked.text);
  t.is(unlocked.body.transfer_title, 'Merger terms');
  t.deepEqual(
    unlocked.body.files.map((f: any) => [f.name, f.size, f.mime_type, f.sha256]),
    [['acquisition-terms.pdf', 1234, 'application/pdf', sha256(bytes)]],
  );
  t.is(unlocked.body.downloads_remaining, 3, 'unlocking counts no download');
});

test('a share without a password shows its files and checksums to anyone', async (t) => {
  const bytes = content(2000);
  const created = await activeTransfer(api, ws.keys.live, { transfer_title: 'Open' }, bytes, { name: 'open.txt' });
  const view = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
  t.is(view.status, 200);
  t.false(view.body.password_required);
  t.is(view.body.transfer_title, 'Open');
  t.deepEqual(
    view.body.files.map((f: any) => [f.name, f.sha256]),
    [['open.txt', sha256(bytes)]],
  );
});

test('an ended transfer answers 410 with its reason and nothing about its content', async (t) => {
  const bytes = content(999);
  const created = await activeTransfer(api, ws.keys.live, { transfer_title: 'Gone soon' }, bytes, {
    name: 'vanishing.txt',
  });
  t.is((await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live })).status, 200);
  const code = created.transfer.short_code;
  const leaks = (text: string) => ['Gone soon', 'vanishing', sha256(bytes), '999'].filter((s) => text.includes(s));
  for (const [path, accept] of [
    [`/v1/shares/${code}`, 'application/json'],
    [`/t/${code}`, 'application/json'],
    [`/t/${code}`, 'text/html'],
  ] as const) {
    const answer = await api.call('GET', path, { headers: { accept } });
    t.is(answer.status, 410, `${path} ${accept}`);
    t.deepEqual(leaks(answer.text), [], `${path} ${accept}`);
    if (accept === 'application/json') t.is(answer.body.error.reason, 'revoked');
    else t.true(answer.text.includes('data-state="revoked"'));
  }
});

// ---- 3. A download link delivers its file once ----

test('a download link used to completion is refused for a new download, and serves resumptions only within twice the file size', async (t) => {
  const bytes = content(300_000);
  const created = await activeTransfer(api, ws.keys.live, { max_downloads: 2 }, bytes);
  const issued = await links(api, created.transfer.short_code);
  const url = issued.body.files[0].download_url;
  const first = await fetchBytes(url);
  t.is(first.status, 200);
  t.true(first.bytes.equals(bytes));
  for (const headers of [{}, { range: 'bytes=0-' }, { range: 'bytes=0-999' }] as Record<string, string>[]) {
    const again = await fetchBytes(url, headers);
    t.is(again.status, 403, JSON.stringify(headers));
    t.is(JSON.parse(again.bytes.toString()).error.reason, 'link_used');
  }
  // A client whose connection dropped with the end of the file in flight may still finish it...
  const resumed = await fetchBytes(url, { range: 'bytes=200000-' });
  t.is(resumed.status, 206);
  t.true(resumed.bytes.equals(bytes.subarray(200_000)));
  // ...but never past two copies' worth of bytes (300,000 + 100,000 sent; 250,000 more would exceed 600,000).
  const beyond = await fetchBytes(url, { range: 'bytes=50000-' });
  t.is(beyond.status, 403);
  t.is(JSON.parse(beyond.bytes.toString()).error.reason, 'link_used');
  const renewed = await links(api, created.transfer.short_code);
  t.is(renewed.status, 200);
  t.is(renewed.body.total_downloads, 2);
  t.true((await fetchBytes(renewed.body.files[0].download_url)).bytes.equals(bytes));
});

test('a broken-off download resumes with Range on the same link, which is spent for new downloads once it sent the last byte', async (t) => {
  const bytes = content(4 * 1024 * 1024);
  const created = await activeTransfer(api, ws.keys.live, {}, bytes);
  const url = (await links(api, created.transfer.short_code)).body.files[0].download_url;
  const aborter = new AbortController();
  const partial = await fetch(url, { signal: aborter.signal });
  t.is(partial.status, 200);
  const reader = partial.body?.getReader();
  const head: Buffer[] = [];
  let received = 0;
  while (received < 64 * 1024) {
    const next = await reader?.read();
    if (!next || next.done) break;
    head.push(Buffer.from(next.value));
    received += next.value.length;
  }
  aborter.abort();
  t.true(received > 0 && received < bytes.length);
  // The server notices the dropped connection and frees the link; until then it answers 429 link_in_use.
  const rest = await eventually(async () => {
    const answer = await fetchBytes(url, { range: `bytes=${received}-` });
    if (answer.status === 429) return undefined;
    return answer;
  });
  t.is(rest.status, 206);
  t.true(Buffer.concat([...head, rest.bytes]).equals(bytes));
  const after = await fetchBytes(url);
  t.is(after.status, 403);
  t.is(JSON.parse(after.bytes.toString()).error.reason, 'link_used');
});

test('20 parallel uses of one download link deliver the file once', async (t) => {
  const bytes = content(2 * 1024 * 1024);
  const created = await activeTransfer(api, ws.keys.live, {}, bytes);
  const url = (await links(api, created.transfer.short_code)).body.files[0].download_url;
  const answers = await Promise.all(Array.from({ length: 20 }, () => fetchBytes(url)));
  const complete = answers.filter((a) => a.status === 200 && a.bytes.equals(bytes));
  t.is(complete.length, 1, `statuses: ${answers.map((a) => a.status).join(',')}`);
  for (const refused of answers.filter((a) => a.status !== 200)) {
    t.true([403, 429].includes(refused.status), String(refused.status));
    t.true(['link_used', 'link_in_use'].includes(JSON.parse(refused.bytes.toString()).error.reason));
  }
  t.is((await fetchBytes(url)).status, 403, 'the link is spent');
});

// ---- 4. Download headers ----

test('downloads are attachments with nosniff and a sandbox CSP, on 200, 206 and errors', async (t) => {
  const bytes = Buffer.from('<html><script>alert(document.domain)</script></html>');
  const created = await activeTransfer(api, ws.keys.live, { max_downloads: 5 }, bytes, {
    name: 'résumé "final".html',
    mime_type: 'text/html',
  });
  const checkHeaders = (headers: Headers, what: string) => {
    t.is(headers.get('x-content-type-options'), 'nosniff', what);
    t.is(headers.get('content-security-policy'), "sandbox; default-src 'none'", what);
  };
  const full = await fetchBytes((await links(api, created.transfer.short_code)).body.files[0].download_url);
  t.is(full.status, 200);
  checkHeaders(full.headers, '200');
  t.is(
    full.headers.get('content-disposition'),
    `attachment; filename="r_sum_ _final_.html"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.html`,
  );
  const ranged = await fetchBytes((await links(api, created.transfer.short_code)).body.files[0].download_url, {
    range: 'bytes=0-9',
  });
  t.is(ranged.status, 206);
  checkHeaders(ranged.headers, '206');
  t.regex(ranged.headers.get('content-disposition') ?? '', /^attachment; .*filename\*=UTF-8''r%C3%A9sum%C3%A9/);
  const bad = await fetchBytes(`${api.url}/v1/downloads/bm90LWEtdG9rZW4.c2lnbmF0dXJl`);
  t.is(bad.status, 404);
  checkHeaders(bad.headers, '404');
  const malformed = await fetchBytes(`${api.url}/v1/downloads/not%20a%20token`);
  t.is(malformed.status, 400);
  checkHeaders(malformed.headers, '400');
});

// ---- 5. Internal error text stays on the server ----

test('/v1/health says a component is down without its internal error text', async (t) => {
  // Nothing listens on port 1 of the loopback: the clamd probe is refused.
  const broken = await startApi({ CLAMD_PORT: '1' });
  t.teardown(() => broken.close());
  const health = await broken.call('GET', '/v1/health');
  t.is(health.status, 503);
  t.is(health.body.components.clamd.status, 'down');
  t.is(health.body.components.database.status, 'ok');
  for (const internal of ['ECONNREFUSED', '127.0.0.1']) t.false(health.text.includes(internal), internal);
});

test('the share page shows a generic message and the request id, never the text of an internal error', async (t) => {
  const fragile = await startApi();
  t.teardown(() => fragile.close());
  const own = await fragile.workspace('Fragile');
  const created = await activeTransfer(fragile, own.keys.live, {});
  const fileId = (await fragile.call('GET', `/v1/transfers/${created.transfer.id}`, { key: own.keys.live })).body
    .files[0].id;
  const secret = 'relation "internal_secret_table" does not exist at 10.9.8.7:5432';
  (fragile.services.db as { transaction: unknown }).transaction = () => Promise.reject(new Error(secret));
  const response = await fetch(`${fragile.url}/t/${created.transfer.short_code}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ file_id: fileId }).toString(),
    redirect: 'manual',
  });
  const html = await response.text();
  t.is(response.status, 500);
  t.false(html.includes('internal_secret_table'));
  t.false(html.includes('10.9.8.7'));
  t.true(html.includes(response.headers.get('x-request-id') ?? 'no request id'), 'the page quotes the request id');
});
