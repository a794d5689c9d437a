import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import test from 'ava';
import { createEncryptStream } from '../lib/crypto/segmented-aead.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, fetchBytes, put, waitForTransfer } from './helpers/transfers.ts';

// Collections end to end (docs/collections.md): the owner's routes, the order
// of their transfers, the share link's public view and downloads through each
// transfer's own machinery, scopes, refusals and events.

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Collections');
  other = await api.workspace('Collections elsewhere');
});
test.after.always(() => api.close());

const key = () => ws.keys.live;
const call = (method: string, path: string, body?: unknown, k = key()) =>
  api.call(method, path, { key: k, ...(body === undefined ? {} : { body }) });

/** A transfer that exists (its files not uploaded): enough to be grouped. */
async function draftTransfer(title = 'draft', k = key()) {
  const created = await createTransfer(api, k, { transfer_title: title, files: [{ name: 'a.bin', size: 10 }] });
  return created.transfer.id;
}

async function activeTransfer(body: Record<string, unknown>, bytes: Buffer = content(4096)) {
  const created = await createTransfer(api, key(), { files: [{ name: 'file.bin', size: bytes.length }], ...body });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, key(), created.transfer.id, (tr) => tr.status === 'active');
  return created.transfer.id;
}

async function newCollection(body: Record<string, unknown> = {}) {
  const created = await call('POST', '/v1/collections', { title: 'A collection', ...body });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  return created.body;
}

const order = (collection: { transfers: { id: string; position: number }[] }) => collection.transfers.map((t) => t.id);

const codeOf = (shareUrl: string) => new URL(shareUrl).pathname.split('/').at(-1) ?? '';

const eventsOf = async (type: string, collectionId: string) =>
  (await createEventQueries(api.services.db).listByType({ workspaceId: ws.workspace_id, environment: 'live' }, type))
    .filter((e) => (e.data.collection as { id: string }).id === collectionId)
    .reverse();

test('create, read, update and delete a collection; its transfers stay; events are recorded', async (t) => {
  const first = await draftTransfer('first');
  const second = await draftTransfer('second');
  const created = await call('POST', '/v1/collections', {
    title: '  Q3 board pack ',
    description: 'For the board',
    transfer_ids: [second, first],
  });
  t.is(created.status, 201, created.text);
  const c = created.body;
  t.is(c.object, 'collection');
  t.is(c.title, 'Q3 board pack');
  t.is(c.description, 'For the board');
  t.is(c.transfer_count, 2);
  t.regex(c.share_url, new RegExp(`^${api.url}/c/[0-9A-Za-z]{12}$`));
  t.deepEqual(order(c), [second, first]);
  t.deepEqual(
    c.transfers.map((x: { position: number }) => x.position),
    [0, 1],
  );
  t.is(c.transfers[0].transfer_title, 'second');
  t.is(c.transfers[0].object, 'collection_transfer');
  t.regex(c.transfers[0].share_url, /\/t\/\w+$/);

  const fetched = await call('GET', `/v1/collections/${c.id}`);
  t.is(fetched.status, 200);
  t.deepEqual(fetched.body, c);

  const updated = await call('PATCH', `/v1/collections/${c.id}`, { title: 'Q3 pack', description: null });
  t.is(updated.status, 200, updated.text);
  t.is(updated.body.title, 'Q3 pack');
  t.is(updated.body.description, null);
  t.deepEqual(order(updated.body), [second, first]);
  t.true(Date.parse(updated.body.updated_at) >= Date.parse(c.updated_at));

  const listed = await call('GET', '/v1/collections?limit=100');
  const item = listed.body.data.find((x: { id: string }) => x.id === c.id);
  t.is(item.title, 'Q3 pack');
  t.is(item.transfer_count, 2);
  t.false('transfers' in item);

  const deleted = await call('DELETE', `/v1/collections/${c.id}`);
  t.is(deleted.status, 200, deleted.text);
  t.deepEqual(deleted.body, { id: c.id, object: 'collection', deleted: true });
  t.is((await call('GET', `/v1/collections/${c.id}`)).status, 404);
  t.is((await call('DELETE', `/v1/collections/${c.id}`)).status, 404);
  t.is((await api.call('GET', `/v1/shared-collections/${codeOf(c.share_url)}`)).status, 404);
  for (const id of [first, second]) t.is((await call('GET', `/v1/transfers/${id}`)).status, 200, 'transfers stay');

  const [createdEvent] = await eventsOf('collection.created', c.id);
  t.deepEqual(createdEvent?.data, {
    collection: { id: c.id, title: 'Q3 board pack', items_count: 0, share_enabled: true },
  });
  const added = await eventsOf('collection.item_added', c.id);
  t.deepEqual(
    added.map((e) => [(e.data.item as { id: string }).id, (e.data.collection as { items_count: number }).items_count]),
    [
      [second, 1],
      [first, 2],
    ],
  );
  const [updatedEvent] = await eventsOf('collection.updated', c.id);
  t.deepEqual(updatedEvent?.data.changed, ['title', 'description']);
  const [deletedEvent] = await eventsOf('collection.deleted', c.id);
  t.deepEqual(deletedEvent?.data.collection, { id: c.id, title: 'Q3 pack', items_count: 2, share_enabled: false });
  for (const event of [createdEvent, updatedEvent, deletedEvent]) {
    t.false(JSON.stringify(event?.data).includes(codeOf(c.share_url)), 'no event carries the link code');
  }
});

test('transfers keep their order: append, insert at a position, move, re-add, remove', async (t) => {
  const [a, b, c, d] = [
    await draftTransfer('a'),
    await draftTransfer('b'),
    await draftTransfer('c'),
    await draftTransfer('d'),
  ];
  const collection = await newCollection({ transfer_ids: [a, b] });
  const path = `/v1/collections/${collection.id}/transfers`;

  const appended = await call('POST', path, { transfer_ids: [c] });
  t.is(appended.status, 200, appended.text);
  t.deepEqual(order(appended.body), [a, b, c]);

  const inserted = await call('POST', path, { transfer_ids: [d], position: 1 });
  t.deepEqual(order(inserted.body), [a, d, b, c]);

  const again = await call('POST', path, { transfer_ids: [a, c] });
  t.deepEqual(order(again.body), [a, d, b, c], 'present transfers stay where they are without a position');

  const moved = await call('POST', path, { transfer_ids: [c, a], position: 0 });
  t.deepEqual(order(moved.body), [c, a, d, b]);
  const atEnd = await call('POST', path, { transfer_ids: [c], position: 99 });
  t.deepEqual(order(atEnd.body), [a, d, b, c]);
  t.deepEqual(
    atEnd.body.transfers.map((x: { position: number }) => x.position),
    [0, 1, 2, 3],
  );

  const removed = await call('DELETE', `${path}/${d}`);
  t.is(removed.status, 200, removed.text);
  t.deepEqual(order(removed.body), [a, b, c]);
  t.deepEqual(
    removed.body.transfers.map((x: { position: number }) => x.position),
    [0, 1, 2],
  );
  t.is(removed.body.transfer_count, 3);
  const notMember = await call('DELETE', `${path}/${d}`);
  t.is(notMember.status, 404);
  t.is(notMember.body.error.code, 'not_found');
  t.is((await call('GET', `/v1/transfers/${d}`)).body.status, 'scanning', 'the transfer itself is untouched');

  // A transfer may be in several collections.
  const elsewhere = await newCollection({ transfer_ids: [a] });
  t.deepEqual(order(elsewhere), [a]);
  t.deepEqual(order((await call('GET', `/v1/collections/${collection.id}`)).body), [a, b, c]);

  const added = await eventsOf('collection.item_added', collection.id);
  t.deepEqual(
    added.map((e) => (e.data.item as { id: string }).id),
    [a, b, c, d],
    'one event per transfer that joined; none for moves',
  );
  const [removedEvent] = await eventsOf('collection.item_removed', collection.id);
  t.deepEqual(removedEvent?.data.item, { kind: 'transfer', id: d });
  t.is((removedEvent?.data.collection as { items_count: number } | undefined)?.items_count, 3);
});

test('the list pages with cursors, newest first, each collection once', async (t) => {
  const fresh = await api.workspace('Collections list');
  const ids: string[] = [];
  for (const title of ['one', 'two', 'three']) {
    const created = await api.call('POST', '/v1/collections', { key: fresh.keys.live, body: { title } });
    ids.push(created.body.id);
  }
  const first = await api.call('GET', '/v1/collections?limit=2', { key: fresh.keys.live });
  t.is(first.status, 200);
  t.is(first.body.object, 'list');
  t.is(first.body.limit, 2);
  t.true(first.body.has_more);
  t.truthy(first.body.next_cursor);
  const second = await api.call('GET', `/v1/collections?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, {
    key: fresh.keys.live,
  });
  t.false(second.body.has_more);
  t.is(second.body.next_cursor, null);
  t.deepEqual(
    [...first.body.data, ...second.body.data].map((c: { id: string }) => c.id),
    [...ids].reverse(),
  );
  const forged = await api.call('GET', '/v1/collections?cursor=abc.def', { key: fresh.keys.live });
  t.is(forged.status, 400);
  t.is(forged.body.error.code, 'validation_error');
});

test('the share link shows only what can be downloaded now, and downloads it through the transfer', async (t) => {
  const bytes = content(300_000);
  const plaintext = content(2048);
  const blob = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key: randomBytes(32), plaintextSize: plaintext.length })),
  );
  const [open, locked, e2e, capped, revoked] = await Promise.all([
    activeTransfer({ transfer_title: 'Open' }, bytes),
    activeTransfer({ transfer_title: 'Locked', password: 'correct horse battery' }),
    activeTransfer({ transfer_title: 'Sealed', encryption_mode: 'e2e' }, blob),
    activeTransfer({ transfer_title: 'Once', max_downloads: 1 }),
    activeTransfer({ transfer_title: 'Revoked' }),
  ]);
  t.is((await call('DELETE', `/v1/transfers/${revoked}`)).status, 200);
  const uploading = await draftTransfer('Still uploading');
  const outsider = await draftTransfer('Not in the collection');
  const collection = await newCollection({
    title: 'Deliverables',
    description: 'Everything for the launch',
    transfer_ids: [revoked, open, uploading, locked, e2e, capped],
  });
  const code = codeOf(collection.share_url);

  const view = await api.call('GET', `/v1/shared-collections/${code}`);
  t.is(view.status, 200, view.text);
  t.is(view.body.object, 'shared_collection');
  t.is(view.body.title, 'Deliverables');
  t.is(view.body.description, 'Everything for the launch');
  t.deepEqual(
    view.body.transfers.map((x: { id: string; access: string }) => [x.id, x.access]),
    [
      [open, 'open'],
      [locked, 'password'],
      [e2e, 'own_link'],
      [capped, 'open'],
    ],
    'revoked and uploading transfers are hidden; the order is the collection\u2019s',
  );
  const [openItem, lockedItem, e2eItem] = view.body.transfers;
  t.is(openItem.transfer_title, 'Open');
  t.is(openItem.files.length, 1);
  t.is(openItem.files[0].size, bytes.length);
  t.is(lockedItem.transfer_title, null, 'nothing about a locked transfer before its password');
  t.is(lockedItem.files, null);
  t.true(lockedItem.password_required);
  t.is(e2eItem.files, null);
  const shown = JSON.stringify(view.body);
  for (const hidden of ['short_code', 'share_url', 'workspace', 'recipient', ws.workspace_id]) {
    t.false(shown.includes(hidden), `the public view does not show ${hidden}`);
  }

  const links = (body: Record<string, unknown>) =>
    api.call('POST', `/v1/shared-collections/${code}/download-links`, { body });

  // An open transfer downloads byte-identical and counts one download of it.
  const granted = await links({ transfer_id: open });
  t.is(granted.status, 200, granted.text);
  t.is(granted.body.object, 'download_links');
  t.is(granted.body.total_downloads, 1);
  const file = await fetchBytes(granted.body.files[0].download_url);
  t.is(file.status, 200);
  t.true(file.bytes.equals(bytes), 'the file comes back byte-identical');
  t.is((await call('GET', `/v1/transfers/${open}`)).body.total_downloads, 1);

  // The password is the transfer's own, with its own refusals.
  const noPassword = await links({ transfer_id: locked });
  t.is(noPassword.status, 403);
  t.is(noPassword.body.error.reason, 'password_required');
  const wrong = await links({ transfer_id: locked, password: 'wrong password!' });
  t.is(wrong.status, 403);
  const unlocked = await links({ transfer_id: locked, password: 'correct horse battery' });
  t.is(unlocked.status, 200, unlocked.text);
  t.is(unlocked.body.files[0].name, 'file.bin');

  // End-to-end: only its own link holds the key.
  const sealed = await links({ transfer_id: e2e });
  t.is(sealed.status, 403);
  t.is(sealed.body.error.code, 'forbidden');
  t.is(sealed.body.error.reason, 'end_to_end');

  // The download limit holds through the collection: once used, it leaves the view and is refused.
  t.is((await links({ transfer_id: capped })).status, 200);
  const spent = await links({ transfer_id: capped });
  t.is(spent.status, 403);
  t.is(spent.body.error.reason, 'limit_reached');
  const after = await api.call('GET', `/v1/shared-collections/${code}`);
  t.false(after.body.transfers.some((x: { id: string }) => x.id === capped));

  // Hidden members are refused as the transfer refuses them; non-members are unknown.
  t.is((await links({ transfer_id: revoked })).status, 410);
  t.is((await links({ transfer_id: uploading })).status, 403);
  const stranger = await links({ transfer_id: outsider });
  t.is(stranger.status, 404);
  t.is(stranger.body.error.param, 'transfer_id');
  t.is((await links({ transfer_id: randomUUID() })).status, 404);
  const bad = await links({ transfer_id: 'nope' });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'validation_error');
});

test('the /c/{code} page lists the transfers and hands out their links without a script', async (t) => {
  const bytes = content(5000);
  const open = await activeTransfer({ transfer_title: 'Page <b>open</b>' }, bytes);
  const locked = await activeTransfer({ transfer_title: 'Page locked', password: 'correct horse battery' });
  const collection = await newCollection({ title: 'On the page', transfer_ids: [open, locked] });
  const code = codeOf(collection.share_url);

  const page = await fetch(`${api.url}/c/${code}`, { headers: { accept: 'text/html' } });
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.truthy(page.headers.get('content-security-policy'));
  const html = await page.text();
  t.true(html.includes('On the page'));
  t.true(html.includes('Page &lt;b&gt;open&lt;/b&gt;'), 'titles are escaped');
  t.false(html.includes('Page locked'), 'a locked transfer shows no title');
  t.true(html.includes(`data-transfer-id="${locked}" data-access="password"`));

  const json = await fetch(`${api.url}/c/${code}`, { headers: { accept: 'application/json' } });
  t.is(((await json.json()) as { object: string }).object, 'shared_collection');

  const form = (fields: Record<string, string>) =>
    fetch(`${api.url}/c/${code}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  const pressed = await form({ transfer_id: open });
  t.is(pressed.status, 200);
  const link = /href="([^"]+\/v1\/downloads\/[^"]+)"/.exec(await pressed.text())?.[1];
  t.truthy(link, 'the page comes back with the download link');
  const file = await fetchBytes((link ?? '').replaceAll('&amp;', '&'));
  t.true(file.bytes.equals(bytes));

  const wrong = await form({ transfer_id: locked, password: 'not the password' });
  t.is(wrong.status, 403);
  t.true((await wrong.text()).includes('The password is not correct.'));

  const unknown = await fetch(`${api.url}/c/Unknown0Code1`);
  t.is(unknown.status, 404);
});

test('an end-to-end transfer behind a password shows no title in the collection, as on its own share view', async (t) => {
  const plaintext = content(2048);
  const blob = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key: randomBytes(32), plaintextSize: plaintext.length })),
  );
  const sealed = await activeTransfer(
    { transfer_title: 'Secret merger plans', encryption_mode: 'e2e', password: 'correct horse battery' },
    blob,
  );
  const collection = await newCollection({ title: 'Mixed', transfer_ids: [sealed] });
  const code = codeOf(collection.share_url);

  const own = await call('GET', `/v1/transfers/${sealed}`);
  const share = await api.call('GET', `/v1/shares/${own.body.short_code}`);
  t.is(share.status, 200, share.text);
  t.is(share.body.transfer_title, null, 'the share view hides it');

  const view = await api.call('GET', `/v1/shared-collections/${code}`);
  t.is(view.status, 200, view.text);
  const [item] = view.body.transfers;
  t.like(item, { id: sealed, access: 'own_link', password_required: true, transfer_title: null, files: null });
  t.false(view.text.includes('Secret merger plans'));

  const page = await fetch(`${api.url}/c/${code}`, { headers: { accept: 'text/html' } });
  const html = await page.text();
  t.false(html.includes('Secret merger plans'), 'nor does the page');
  t.true(html.includes('Protected by a password'));
});

test('rotating the link makes the old code 404; disabling clears it; rotating turns it back on', async (t) => {
  const open = await activeTransfer({ transfer_title: 'Rotated' });
  const collection = await newCollection({ transfer_ids: [open] });
  const oldCode = codeOf(collection.share_url);
  t.is((await api.call('GET', `/v1/shared-collections/${oldCode}`)).status, 200);

  const rotated = await call('POST', `/v1/collections/${collection.id}/rotate-share-link`);
  t.is(rotated.status, 200, rotated.text);
  const newCode = codeOf(rotated.body.share_url);
  t.not(newCode, oldCode);
  for (const response of [
    await api.call('GET', `/v1/shared-collections/${oldCode}`),
    await api.call('POST', `/v1/shared-collections/${oldCode}/download-links`, { body: { transfer_id: open } }),
    await api.call('GET', `/c/${oldCode}`),
  ]) {
    t.is(response.status, 404);
    t.is(response.body.error.code, 'not_found');
  }
  t.is((await api.call('GET', `/v1/shared-collections/${newCode}`)).body.transfers.length, 1);

  const disabled = await call('DELETE', `/v1/collections/${collection.id}/share-link`);
  t.is(disabled.status, 200, disabled.text);
  t.is(disabled.body.share_url, null);
  t.is((await api.call('GET', `/v1/shared-collections/${newCode}`)).status, 404);
  t.is(
    (await call('GET', '/v1/collections?limit=100')).body.data.find((c: { id: string }) => c.id === collection.id)
      .share_url,
    null,
  );

  const again = await call('POST', `/v1/collections/${collection.id}/rotate-share-link`);
  t.truthy(again.body.share_url);
  t.is((await api.call('GET', `/v1/shared-collections/${codeOf(again.body.share_url)}`)).status, 200);

  const changes = await eventsOf('collection.updated', collection.id);
  t.deepEqual(
    changes.map((e) => [e.data.changed, (e.data.collection as { share_enabled: boolean }).share_enabled]),
    [
      [['share_link'], true],
      [['share_link'], false],
      [['share_link'], true],
    ],
  );
});

test('scopes: read keys only read, write keys curate, only manage keys delete or change the link', async (t) => {
  const reader = (await ws.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['collections:read'] })).key;
  const writer = (await ws.mintKey({ name: 'writer', key_type: 'restricted', scopes: ['collections:write'] })).key;
  const manager = (await ws.mintKey({ name: 'manager', key_type: 'restricted', scopes: ['collections:manage'] })).key;
  const transfer = await draftTransfer();
  const collection = await newCollection({ transfer_ids: [transfer] });
  const path = `/v1/collections/${collection.id}`;

  const expectMissing = async (response: Promise<{ status: number; body: any }>, what: string) => {
    const answer = await response;
    t.is(answer.status, 403, what);
    t.is(answer.body.error.code, 'scope_missing', what);
  };

  t.is((await call('GET', path, undefined, reader)).status, 200);
  t.is((await call('GET', '/v1/collections', undefined, reader)).status, 200);
  await expectMissing(call('POST', '/v1/collections', { title: 'x' }, reader), 'reader create');
  await expectMissing(call('PATCH', path, { title: 'x' }, reader), 'reader update');
  await expectMissing(call('POST', `${path}/transfers`, { transfer_ids: [transfer] }, reader), 'reader add');
  await expectMissing(call('DELETE', `${path}/transfers/${transfer}`, undefined, reader), 'reader remove');
  await expectMissing(call('DELETE', path, undefined, reader), 'reader delete');

  await expectMissing(call('GET', path, undefined, writer), 'writer read');
  const made = await call('POST', '/v1/collections', { title: 'by the writer' }, writer);
  t.is(made.status, 201);
  t.is((await call('PATCH', path, { title: 'renamed' }, writer)).status, 200);
  t.is((await call('DELETE', `${path}/transfers/${transfer}`, undefined, writer)).status, 200);
  t.is((await call('POST', `${path}/transfers`, { transfer_ids: [transfer] }, writer)).status, 200);
  await expectMissing(call('DELETE', path, undefined, writer), 'writer delete');
  await expectMissing(call('POST', `${path}/rotate-share-link`, undefined, writer), 'writer rotate');
  await expectMissing(call('DELETE', `${path}/share-link`, undefined, writer), 'writer disable');

  await expectMissing(call('PATCH', path, { title: 'x' }, manager), 'manager update');
  t.is((await call('POST', `${path}/rotate-share-link`, undefined, manager)).status, 200);
  t.is((await call('DELETE', `${path}/share-link`, undefined, manager)).status, 200);
  t.is((await call('DELETE', path, undefined, manager)).status, 200);
});

test('bad input gets the error envelope with the field at fault', async (t) => {
  const collection = await newCollection();
  const path = `/v1/collections/${collection.id}`;
  const theirs = await draftTransfer('theirs', other.keys.live);
  const cases: [string, string, unknown, number, string, string][] = [
    ['POST', '/v1/collections', {}, 400, 'validation_error', 'title'],
    ['POST', '/v1/collections', { title: '   ' }, 400, 'validation_error', 'title'],
    ['POST', '/v1/collections', { title: 'x'.repeat(201) }, 400, 'validation_error', 'title'],
    ['POST', '/v1/collections', { title: 'ok', description: 'x'.repeat(2001) }, 400, 'validation_error', 'description'],
    ['POST', '/v1/collections', { title: 'ok', transfer_ids: ['nope'] }, 400, 'validation_error', 'transfer_ids.0'],
    ['POST', '/v1/collections', { title: 'ok', extra: 1 }, 400, 'validation_error', 'extra'],
    ['POST', '/v1/collections', { title: 'ok', transfer_ids: [theirs] }, 404, 'not_found', 'transfer_ids'],
    ['PATCH', path, {}, 400, 'validation_error', ''],
    ['POST', `${path}/transfers`, { transfer_ids: [] }, 400, 'validation_error', 'transfer_ids'],
    ['POST', `${path}/transfers`, { transfer_ids: [theirs] }, 404, 'not_found', 'transfer_ids'],
    ['POST', `${path}/transfers`, { transfer_ids: [randomUUID()], position: -1 }, 400, 'validation_error', 'position'],
  ];
  for (const [method, url, body, status, code, param] of cases) {
    const response = await call(method, url, body);
    t.is(response.status, status, `${method} ${url} ${JSON.stringify(body).slice(0, 60)}: ${response.text}`);
    t.is(response.body.error.code, code);
    if (param) t.is(response.body.error.param, param);
    t.truthy(response.body.error.request_id);
  }
  const repeated = randomUUID();
  const duplicates = await call('POST', `${path}/transfers`, { transfer_ids: [repeated, repeated] });
  t.is(duplicates.status, 400);
  const tooMany = await call('POST', '/v1/collections', {
    title: 'too many',
    transfer_ids: Array.from({ length: 101 }, () => randomUUID()),
  });
  t.is(tooMany.status, 400);
  t.is((await call('GET', '/v1/collections/not-a-uuid')).status, 400);
  t.is((await call('GET', `/v1/collections/${randomUUID()}`)).status, 404);
  t.is((await api.call('GET', '/v1/shared-collections/no')).status, 400);
  t.is((await call('GET', path)).body.transfer_count, 0, 'nothing was added by the refused calls');
});

test('create is idempotent under an Idempotency-Key', async (t) => {
  const idempotencyKey = `collections-${randomUUID()}`;
  const send = () =>
    api.call('POST', '/v1/collections', {
      key: key(),
      body: { title: 'Once only' },
      headers: { 'idempotency-key': idempotencyKey },
    });
  const first = await send();
  const second = await send();
  t.is(first.status, 201);
  t.is(second.status, 201);
  t.is(second.headers.get('x-service-idempotent-replay'), 'true');
  t.is(second.body.id, first.body.id);
  const all = await call('GET', '/v1/collections?limit=100');
  t.is(all.body.data.filter((c: { title: string }) => c.title === 'Once only').length, 1);
  t.is((await eventsOf('collection.created', first.body.id)).length, 1);
});

test('a collection created with many transfers records their item_added events in the order given', async (t) => {
  // One loop in one transaction records them, many within the same millisecond: the listing must
  // still give them in the order they were recorded.
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await draftTransfer(`batch ${i}`));
  const collection = await newCollection({ transfer_ids: ids });
  const added = await eventsOf('collection.item_added', collection.id);
  t.deepEqual(
    added.map((e) => (e.data.item as { id: string }).id),
    ids,
  );
});
