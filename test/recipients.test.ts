import { request as httpRequest } from 'node:http';
import test from 'ava';
import { z } from 'zod';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { type CapturedMail, uniqueAddress, waitForMail } from './helpers/mail.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// The address book and personal links (docs/recipients.md), end to end through
// the API, the worker, MinIO and maildev: each recipient gets a link of their
// own, and a download counts for them only once every byte was sent.

const MiB = 1024 * 1024;

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Recipients');
});
test.after.always(() => api?.close());

const call = (method: string, path: string, body?: unknown, key = ws.keys.live) =>
  api.call(method, path, { key, body });

/** The share code at the end of a share URL, whichever server wrote it. */
const codeOf = (url: string) => new URL(url).pathname.split('/').pop() ?? '';
const linkIn = (mail: CapturedMail) => /\/t\/([A-Za-z0-9]+)/.exec(mail.text)?.[1] ?? '';

type TransferRecipient = {
  recipient_id: string | null;
  email: string;
  share_url: string;
  mailed_at: string | null;
  downloads_completed: number;
  last_downloaded_at: string | null;
  files_downloaded: string[];
};

async function recipientsOf(transferId: string): Promise<TransferRecipient[]> {
  const listed = await call('GET', `/v1/transfers/${transferId}/recipients`);
  if (listed.status !== 200) throw new Error(`${listed.status} ${listed.text}`);
  return listed.body.data;
}

/** How far the link of the grant in `downloadUrl` has sent the file without a gap. */
async function deliveredThrough(grantId: string): Promise<number> {
  return (
    (await api.services.db.maybeOneFirst(sql.type(z.object({ delivered_through: z.coerce.number() }))`
      SELECT delivered_through FROM recipient_deliveries WHERE grant_id = ${grantId}`)) ?? 0
  );
}
const grantOf = (downloadUrl: string) => {
  const body = codeOf(downloadUrl).split('.')[0] ?? '';
  return (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { d: { g: string } }).d.g;
};

/** Reads the start of a download, then closes the socket mid-body; the bytes it had. */
function abortAfterFirstBytes(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}`));
      response.once('data', (chunk: Buffer) => {
        request.destroy();
        resolve(chunk);
      });
    });
    request.on('error', () => undefined);
    request.end();
  });
}

test.serial(
  'a transfer to three recipients: three entries, three mails with their own links, and only completed downloads count',
  async (t) => {
    const [a, b, c] = [uniqueAddress('ann'), uniqueAddress('bob'), uniqueAddress('cy')];
    const data = content(16 * MiB + 123);
    // `recipient` and `recipients` together: the union, each address once whatever the case of its domain.
    const created = await createTransfer(api, ws.keys.live, {
      recipient: a,
      recipients: [b, c, a.replace('@valise.test', '@VALISE.test')],
      transfer_title: 'Figures',
      files: [{ name: 'figures.bin', size: data.length }],
    });
    t.deepEqual(
      (created.transfer as unknown as { recipients: TransferRecipient[] }).recipients.map((r) => r.email),
      [a, b, c],
    );
    t.is((created.transfer as unknown as { recipient: string }).recipient, a, '`recipient` is the first address');
    t.is((await put(created.upload_urls[0]?.url ?? '', data)).status, 200);
    await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active', 120_000);

    // Three address-book entries, made from the transfer.
    for (const address of [a, b, c]) {
      const found = await call('GET', `/v1/recipients?search=${encodeURIComponent(address)}`);
      t.is(found.body.data.length, 1, address);
      t.like(found.body.data[0], { email: address, source: 'transfer', name: null });
      t.is(found.body.data[0].stats.transfers_sent, 1);
    }

    // Three mails, each with the recipient's own link, the one the owner's API shows.
    const sent = await recipientsOf(created.transfer.id);
    const mails = await Promise.all([a, b, c].map((address) => waitForMail(address, /Figures/, 90_000)));
    const codes = mails.map(linkIn);
    t.is(new Set([...codes, created.transfer.short_code]).size, 4, 'three personal codes, none the transfer’s own');
    t.deepEqual(
      codes,
      sent.map((r) => codeOf(r.share_url)),
    );
    await eventually(async () =>
      (await recipientsOf(created.transfer.id)).every((r) => r.mailed_at) ? true : undefined,
    );
    const [codeA, codeB] = codes as [string, string, string];

    // A personal link shows the same transfer, under its own code.
    const view = await api.call('GET', `/v1/shares/${codeA}`);
    t.is(view.status, 200);
    t.is(view.body.short_code, codeA);
    t.is(view.body.files[0].size, data.length);

    // A downloads the whole file.
    const linkA = (await links(api, codeA)).body.files[0].download_url as string;
    const whole = await fetchBytes(linkA);
    t.true(whole.bytes.equals(data));
    const afterA = await eventually(async () => {
      const now = await recipientsOf(created.transfer.id);
      return now[0]?.downloads_completed === 1 ? now : undefined;
    });
    t.truthy(afterA[0]?.last_downloaded_at);
    t.deepEqual(afterA[0]?.files_downloaded, [created.upload_urls[0]?.file_id]);

    // B's connection closes mid-body: nothing counted.
    const linkB = (await links(api, codeB)).body.files[0].download_url as string;
    const grantB = grantOf(linkB);
    const head = await abortAfterFirstBytes(linkB);
    t.true(head.length > 0 && head.length < data.length);
    await eventually(async () => ((await deliveredThrough(grantB)) > 0 ? true : undefined));
    t.true((await deliveredThrough(grantB)) < data.length, 'an aborted response never reaches the end');
    // A range that ends the file but leaves a gap after what was sent does not complete it either.
    const tail = await eventually(async () => {
      const attempt = await fetchBytes(linkB, { range: 'bytes=-1000' });
      return attempt.status === 429 ? undefined : attempt;
    });
    t.is(tail.status, 206);
    let now = await recipientsOf(created.transfer.id);
    t.deepEqual(
      now.map((r) => r.downloads_completed),
      [1, 0, 0],
      'B aborted and C did nothing: only A counted',
    );

    // B resumes from what arrived, to the end: counted once.
    const rest = await fetchBytes(linkB, { range: `bytes=${head.length}-` });
    t.is(rest.status, 206);
    t.true(Buffer.concat([head, rest.bytes]).equals(data));
    now = await eventually(async () => {
      const listed = await recipientsOf(created.transfer.id);
      return listed[1]?.downloads_completed === 1 ? listed : undefined;
    });
    // Fetching the end once more through the same link counts nothing more.
    t.is((await fetchBytes(linkB, { range: 'bytes=-10' })).status, 206);
    await new Promise((resolve) => setTimeout(resolve, 300));
    now = await recipientsOf(created.transfer.id);
    t.deepEqual(
      now.map((r) => r.downloads_completed),
      [1, 1, 0],
    );

    // The address book adds it up per entry.
    const bob = await call('GET', `/v1/recipients/${now[1]?.recipient_id}`);
    t.like(bob.body.stats, { transfers_sent: 1, downloads_completed: 1 });
    t.truthy(bob.body.stats.last_downloaded_at);
    const cy = await call('GET', `/v1/recipients/${now[2]?.recipient_id}`);
    t.like(cy.body.stats, { transfers_sent: 1, downloads_completed: 0, last_downloaded_at: null });

    // Events name the recipient, never a personal link.
    const events = await api.services.db.any(sql.type(z.object({ type: z.string(), data: z.unknown() }))`
      SELECT type, data FROM events WHERE workspace_id = ${ws.workspace_id}
        AND type IN ('recipient.download_completed', 'transfer.downloaded', 'recipient.created')`);
    const completed = events.filter((e) => e.type === 'recipient.download_completed');
    t.deepEqual(
      completed.map((e) => (e.data as { recipient: { email: string } }).recipient.email).sort(),
      [a, b].sort(),
    );
    const serialised = JSON.stringify(events);
    for (const code of codes) t.false(serialised.includes(code), 'no event carries a personal code');
    const audit = await call('GET', '/v1/audit?limit=100');
    for (const code of codes)
      t.false(JSON.stringify(audit.body).includes(code), 'the audit log carries no personal code');
  },
);

test('a transfer never overwrites an entry: the name set by hand stays, the case of the address is ignored', async (t) => {
  const address = uniqueAddress('dana');
  const made = await call('POST', '/v1/recipients', { email: address, name: 'Dana', organisation: 'Acme' });
  t.is(made.status, 201);
  const created = await createTransfer(api, ws.keys.live, {
    recipients: [address.toUpperCase()],
    files: [{ name: 'x.bin', size: 10 }],
  });
  const entry = await call('GET', `/v1/recipients/${made.body.id}`);
  t.like(entry.body, { email: address, name: 'Dana', organisation: 'Acme', source: 'api' });
  t.is(entry.body.stats.transfers_sent, 1);
  const sent = await recipientsOf(created.transfer.id);
  t.is(sent[0]?.recipient_id, made.body.id);
});

test('CRUD, normalisation, search and tags', async (t) => {
  const local = `Eve.${Date.now()}`;
  const created = await call('POST', '/v1/recipients', {
    email: `  ${local}@Example.COM `,
    name: 'Eve Example',
    organisation: 'Globex Legal',
    tags: ['Client', 'client ', 'vip'],
  });
  t.is(created.status, 201, created.text);
  t.like(created.body, {
    object: 'recipient',
    email: `${local}@example.com`,
    tags: ['client', 'vip'],
    source: 'api',
    stats: { transfers_sent: 0, downloads_completed: 0, last_sent_at: null, last_downloaded_at: null },
  });
  const id = created.body.id as string;

  const again = await call('POST', '/v1/recipients', { email: `${local.toLowerCase()}@example.com` });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'validation_error');
  t.is(again.body.error.recipient_id, id);

  const bySearch = await call('GET', `/v1/recipients?search=${encodeURIComponent('globex leg')}`);
  t.true(bySearch.body.data.some((r: { id: string }) => r.id === id));
  const byTag = await call('GET', '/v1/recipients?tag=VIP&limit=100');
  t.true(byTag.body.data.some((r: { id: string }) => r.id === id));
  t.true(byTag.body.data.every((r: { tags: string[] }) => r.tags.includes('vip')));
  const noTag = await call('GET', '/v1/recipients?tag=nobody-has-this');
  t.deepEqual(noTag.body.data, []);
  const wildcard = await call('GET', `/v1/recipients?search=${encodeURIComponent('%')}`);
  t.false(
    wildcard.body.data.some((r: { id: string }) => r.id === id),
    '% is a character, not a wildcard',
  );

  // Pages of one, with a cursor, until the end.
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: { id: string }[]; next_cursor: string | null } } = await call(
      'GET',
      `/v1/recipients?limit=1&tag=vip${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    seen.push(...page.body.data.map((r) => r.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  t.true(seen.includes(id));
  t.is(new Set(seen).size, seen.length);

  const updated = await call('PATCH', `/v1/recipients/${id}`, { name: '', tags: ['Partner'], organisation: null });
  t.is(updated.status, 200);
  t.like(updated.body, { name: null, organisation: null, tags: ['partner'] });
  const other = await call('POST', '/v1/recipients', { email: uniqueAddress('frank') });
  const clash = await call('PATCH', `/v1/recipients/${id}`, { email: other.body.email.toUpperCase() });
  t.is(clash.status, 409);
  const renamed = await call('PATCH', `/v1/recipients/${id}`, { email: `eve.${Date.now()}@Example.org` });
  t.is(renamed.status, 200);
  t.regex(renamed.body.email, /@example\.org$/);

  const removed = await call('DELETE', `/v1/recipients/${id}`);
  t.deepEqual(removed.body, { id, object: 'recipient', deleted: true });
  t.is((await call('GET', `/v1/recipients/${id}`)).status, 404);
  t.is((await call('DELETE', `/v1/recipients/${id}`)).status, 404);
});

test('a deleted entry leaves the transfer its address and working link', async (t) => {
  const address = uniqueAddress('gone');
  const created = await createTransfer(api, ws.keys.live, { recipients: [address], files: [{ name: 'x', size: 1 }] });
  const [sent] = await recipientsOf(created.transfer.id);
  t.is((await call('DELETE', `/v1/recipients/${sent?.recipient_id}`)).status, 200);
  const [after] = await recipientsOf(created.transfer.id);
  t.like(after, { recipient_id: null, email: address, share_url: sent?.share_url });
  const view = await api.call('GET', `/v1/shares/${codeOf(sent?.share_url ?? '')}`);
  t.is(view.status, 200);
  t.is(view.body.blocked_reason, 'uploading');
});

test('bad input gets the error envelope', async (t) => {
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/v1/recipients', {}, 'email'],
    ['POST', '/v1/recipients', { email: 'not an address' }, 'email'],
    ['POST', '/v1/recipients', { email: `${'x'.repeat(250)}@a.io` }, 'email'],
    [
      'POST',
      '/v1/recipients',
      { email: uniqueAddress('t'), tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      'tags',
    ],
    ['POST', '/v1/recipients', { email: uniqueAddress('t'), tags: ['-leading'] }, 'tags.0'],
    ['POST', '/v1/recipients', { email: uniqueAddress('t'), tags: ['x'.repeat(41)] }, 'tags.0'],
    ['POST', '/v1/recipients', { email: uniqueAddress('t'), name: 'n'.repeat(201) }, 'name'],
    ['POST', '/v1/recipients', { email: uniqueAddress('t'), colour: 'blue' }, 'colour'],
    ['PATCH', '/v1/recipients/00000000-0000-4000-8000-000000000000', {}, ''],
    ['GET', '/v1/recipients/not-a-uuid', undefined, 'id'],
    ['POST', '/v1/transfers', { files: [{ name: 'a', size: 1 }], recipients: ['nope'] }, 'recipients.0'],
    [
      'POST',
      '/v1/transfers',
      { files: [{ name: 'a', size: 1 }], recipients: Array.from({ length: 51 }, (_, i) => `r${i}@valise.test`) },
      'recipients',
    ],
  ];
  for (const [method, path, body, param] of cases) {
    const answer = await call(method, path, body);
    t.is(answer.status, 400, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}: ${answer.text}`);
    t.is(answer.body.error.code, 'validation_error');
    if (param) t.is(answer.body.error.param, param, answer.text);
  }
  // 50 addresses with `recipient` besides makes 51: refused too.
  const over = await call('POST', '/v1/transfers', {
    files: [{ name: 'a', size: 1 }],
    recipient: 'first@valise.test',
    recipients: Array.from({ length: 50 }, (_, i) => `r${i}@valise.test`),
  });
  t.is(over.status, 400);
  t.is(over.body.error.param, 'recipients');
  t.is((await call('GET', '/v1/recipients/00000000-0000-4000-8000-000000000000')).status, 404);
});

test('reading needs recipients:read, writing recipients:write, transfer recipients transfers:read', async (t) => {
  const reader = await ws.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['recipients:read'] });
  const other = await ws.mintKey({ name: 'other', key_type: 'restricted', scopes: ['transfers:write'] });
  const entry = await call('POST', '/v1/recipients', { email: uniqueAddress('scoped') });
  t.is((await call('GET', '/v1/recipients', undefined, reader.key)).status, 200);
  t.is((await call('GET', `/v1/recipients/${entry.body.id}`, undefined, reader.key)).status, 200);
  for (const [method, path, body, key] of [
    ['POST', '/v1/recipients', { email: uniqueAddress('x') }, reader.key],
    ['PATCH', `/v1/recipients/${entry.body.id}`, { name: 'x' }, reader.key],
    ['DELETE', `/v1/recipients/${entry.body.id}`, undefined, reader.key],
    ['GET', '/v1/recipients', undefined, other.key],
    ['GET', `/v1/recipients/${entry.body.id}`, undefined, other.key],
  ] as const) {
    const denied = await call(method, path, body, key);
    t.is(denied.status, 403, `${method} ${path}`);
    t.is(denied.body.error.code, 'scope_missing');
  }
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a', size: 1 }] });
  const denied = await call('GET', `/v1/transfers/${created.transfer.id}/recipients`, undefined, reader.key);
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'scope_missing');
});
