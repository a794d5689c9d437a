import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { promisify } from 'node:util';
import test from 'ava';
import { z } from 'zod';
import { issueApiKey, resolveScopes } from '../lib/api-keys/service.ts';
import { signToken } from '../lib/crypto/signed-token.ts';
import { createWorkspaceQueries } from '../lib/db/queries/workspaces.ts';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { personalColumnsHolding } from './helpers/personal-data.ts';
import { content, createTransfer, put } from './helpers/transfers.ts';

// GDPR exports and erasure end to end: two users of one workspace leave data in several families,
// each from an address of their own; an export about one holds that user's data from every family
// that has some and nothing of the other's, behind a link valid 300 seconds, sealed in the object
// store; erasing that user leaves none of their addresses, name or network addresses in any
// declared personal column, and the other user's data as it was.

const run = promisify(execFile);

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  // One trusted proxy: each user's requests carry their own client address in X-Forwarded-For.
  api = await startApi({ TRUST_PROXY_HOPS: '1' });
  ws = await api.workspace('GDPR');
  other = await api.workspace('GDPR elsewhere');
});
test.after.always(async () => {
  await api?.close();
});

type Person = { userId: string; email: string; name: string; ip: string; key: string; file: string };

const tag = () => randomBytes(4).toString('hex');
/**
 * A documentation address (2001:db8::/32) of its own: its checks search the whole database for it,
 * while other test files write their own addresses (an IPv4 one such as 203.0.113.9 is also a
 * substring of 203.0.113.90 to .99). Written as the server stores it: eight groups, none zero.
 */
const testNetAddress = () =>
  [
    '2001',
    'db8',
    ...Array.from(randomBytes(12).toString('hex').match(/.{4}/g) ?? [], (group) =>
      (Number.parseInt(group, 16) || 1).toString(16),
    ),
  ].join(':');

const person = (label: string, userId: string, email: string, key: string): Person => {
  const t = tag();
  return { userId, email, name: `${label} Tester ${t}`, ip: testNetAddress(), key, file: `${label}-${t}.pdf` };
};

/** The workspace's owner, with their live key. */
async function owner(label: string): Promise<Person> {
  const email = await api.services.db.oneFirst(
    sql.type(z.object({ email: z.string() }))`SELECT email FROM users WHERE id = ${ws.user_id}`,
  );
  return person(label, ws.user_id, email, ws.keys.live);
}

/** Another user of the workspace, with a full live key of their own. */
async function member(label: string): Promise<Person> {
  const email = `${label}-${tag()}@example.com`;
  const user = await createWorkspaceQueries(api.services.db).insertUser(ws.workspace_id, email, 'member', null);
  const minted = await issueApiKey(
    api.services,
    { workspaceId: ws.workspace_id, userId: user.id, environment: 'live' },
    { name: `${label}'s key`, key_type: 'full', scopes: resolveScopes('full', undefined) },
  );
  return person(label, user.id, email, minted.key);
}

/** What one person does: a transfer, an address-book entry and a vault membership naming them, an intake notifying them. */
async function leaveData(person: Person) {
  const headers = { 'x-forwarded-for': person.ip, 'user-agent': `agent-of-${person.name.replaceAll(' ', '-')}` };
  const as = (method: string, path: string, body?: unknown) =>
    api.call(method, path, { key: person.key, headers, ...(body === undefined ? {} : { body }) });
  const bytes = content(64);
  const created = await createTransfer(api, person.key, { files: [{ name: person.file, size: bytes.length }] });
  for (const upload of created.upload_urls) await put(upload.url, bytes);
  const recipient = await as('POST', '/v1/recipients', { email: person.email, name: person.name });
  if (recipient.status !== 201) throw new Error(`recipient: ${recipient.text}`);
  // Titles are the workspace's own words: they name no one.
  const coffre = await as('POST', '/v1/coffres', { name: `Room ${tag()}` });
  if (coffre.status !== 201) throw new Error(`vault: ${coffre.text}`);
  const joined = await as('POST', `/v1/coffres/${coffre.body.id}/members`, {
    email: person.email,
    name: person.name,
    access: 'view',
  });
  if (joined.status !== 201) throw new Error(`vault member: ${joined.text}`);
  const intake = await as('POST', '/v1/intakes', { title: `Intake ${tag()}`, notify: [person.email] });
  if (intake.status !== 201) throw new Error(`intake: ${intake.text}`);
  return { transferId: created.transfer.id as string };
}

async function completedExport(key: string, body: unknown) {
  const requested = await api.call('POST', '/v1/gdpr/exports', { key, body });
  if (requested.status !== 202) throw new Error(`export: ${requested.status} ${requested.text}`);
  return eventually(async () => {
    const found = await api.call('GET', `/v1/gdpr/exports/${requested.body.id}`, { key });
    if (found.body.status === 'failed') throw new Error(`export failed: ${found.body.error}`);
    return found.body.status === 'completed' ? found : undefined;
  }, 90_000);
}

let people: Promise<{ alice: Person; bob: Person }> | undefined;
const twoPeople = () => {
  people ??= (async () => {
    const alice = await owner('alice');
    const bob = await member('bob');
    await leaveData(alice);
    await leaveData(bob);
    return { alice, bob };
  })();
  return people;
};

test.serial(
  "an export of one user holds their data from every family that has some, and none of another's",
  async (t) => {
    const { alice, bob } = await twoPeople();
    const done = await completedExport(ws.keys.live, { user_id: alice.userId });
    t.is(done.body.user_id, alice.userId);
    t.is(done.body.families_done, done.body.families_total);
    t.true(done.body.families_total > 5);

    // The link is valid 300 seconds from when it was handed out.
    const lifetime = Date.parse(done.body.download_expires_at) - Date.now();
    t.true(lifetime > 280_000 && lifetime <= 300_000, `the link lives ${lifetime} ms`);
    const download = await fetch(done.body.download_url);
    t.is(download.status, 200);
    t.regex(download.headers.get('content-type') ?? '', /application\/json/);
    const text = await download.text();
    const data = JSON.parse(text);
    t.is(data.user_id, alice.userId);
    t.is(data.environment, 'live');

    const families = data.families as Record<string, Record<string, Record<string, unknown>[]>>;
    const rows = (family: string, table: string) => families[family]?.[table] ?? [];
    t.true(rows('workspaces', 'users').some((row) => row.email === alice.email));
    t.true(rows('audit', 'audit_log').some((row) => row.ip_address === alice.ip));
    t.true(rows('transfers', 'transfer_files').some((row) => row.name === alice.file && row.size === 64));
    t.true(rows('recipients', 'recipients').some((row) => row.name === alice.name));
    t.true(rows('coffres', 'coffre_members').some((row) => row.email === alice.email));
    t.true(rows('intakes', 'intakes').some((row) => JSON.stringify(row.notify_emails).includes(alice.email)));
    t.true(rows('events', 'events').length > 0);
    // No content, only names and sizes; nothing of the other user.
    for (const theirs of [bob.email, bob.name, bob.ip, bob.file, bob.userId]) t.false(text.includes(theirs), theirs);

    // What lies in the object store is not the JSON.
    const objectKey = await api.services.db.oneFirst(
      sql.type(z.object({ object_key: z.string() }))`SELECT object_key FROM gdpr_exports WHERE id = ${done.body.id}`,
    );
    const stored = await buffer(await api.services.objects.read(objectKey));
    t.true(stored.length > text.length);
    t.false(stored.includes(Buffer.from(alice.email)));
    t.false(stored.includes(Buffer.from('"families"')));

    // The latest export is this one; a new link each time.
    const latest = await api.call('GET', '/v1/gdpr/export', { key: ws.keys.live });
    t.is(latest.body.id, done.body.id);
    t.not(latest.body.download_url, done.body.download_url);
  },
);

test.serial('an export link is refused once expired, and a forged one is unknown', async (t) => {
  const done = await completedExport(ws.keys.live, {});
  t.is(done.body.user_id, null);
  t.is((await fetch(done.body.download_url)).status, 200);
  // The same link, as it is 300 seconds later: signed with the links' key, its expiry passed.
  const expired = signToken(
    api.services.keys.links,
    'gdpr-export',
    { x: done.body.id, n: randomUUID() },
    new Date(Date.now() - 1000),
  );
  const refused = await fetch(`${api.url}/v1/gdpr/export-downloads/${expired}`);
  t.is(refused.status, 403);
  t.is(((await refused.json()) as { error: { code: string } }).error.code, 'forbidden');
  const forged = await fetch(`${api.url}/v1/gdpr/export-downloads/${expired.slice(0, -4)}AAAA`);
  t.is(forged.status, 404);
});

test.serial(
  "other workspaces and environments do not see an export; a key without gdpr:export can't ask",
  async (t) => {
    const requested = await api.call('POST', '/v1/gdpr/exports', { key: ws.keys.live, body: {} });
    t.is(requested.status, 202);
    t.is(requested.body.status, 'queued');
    for (const key of [other.keys.live, ws.keys.test, ws.keys.sandbox]) {
      const found = await api.call('GET', `/v1/gdpr/exports/${requested.body.id}`, { key });
      t.is(found.status, 404);
      t.is(found.body.error.code, 'not_found');
    }
    const elsewhere = await api.call('POST', '/v1/gdpr/exports', {
      key: other.keys.live,
      body: { user_id: ws.user_id },
    });
    t.is(elsewhere.status, 404, 'a user of another workspace is no one here');
    t.is(elsewhere.body.error.param, 'user_id');
    const reader = await ws.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['transfers:read'] });
    const refused = await api.call('POST', '/v1/gdpr/exports', { key: reader.key, body: {} });
    t.is(refused.status, 403);
    t.is(refused.body.error.code, 'scope_missing');
    const unknown = await api.call('POST', '/v1/gdpr/exports', { key: ws.keys.live, body: { user_id: 'nobody' } });
    t.is(unknown.status, 400);
  },
);

const foundIn = (value: string) => personalColumnsHolding(api.services.db, value);

test.serial(
  "erasing a user leaves none of their addresses, name or network addresses, and the other's data",
  async (t) => {
    const { alice, bob } = await twoPeople();
    const before = await completedExport(ws.keys.live, { user_id: alice.userId });
    for (const value of [alice.email, alice.name, alice.ip]) t.true((await foundIn(value)).length > 0, value);
    const bobBefore = await Promise.all([bob.email, bob.name, bob.ip].map(foundIn));

    const eraseAlice = async () =>
      JSON.parse(
        (
          await run('npm', [
            'run',
            '-s',
            'admin',
            '--',
            'erase-user',
            '--workspace',
            ws.workspace_id,
            '--user',
            alice.userId,
          ])
        ).stdout,
      );
    const result = await eraseAlice();
    t.is(result.user_id, alice.userId);
    t.true(result.api_keys_revoked >= 3, 'the owner had a key per environment');

    for (const value of [alice.email, alice.name, alice.ip]) t.deepEqual(await foundIn(value), [], value);
    // The audit log was erased through its own hook: its hash chain still verifies.
    const verified = await api.call('GET', '/v1/audit/verify', { key: bob.key });
    t.like(verified.body, { valid: true, first_broken: null });
    t.deepEqual(await Promise.all([bob.email, bob.name, bob.ip].map(foundIn)), bobBefore);

    // Once is enough: again, it finds nothing more to revoke or remove.
    const again = await eraseAlice();
    t.is(again.api_keys_revoked, 0);
    t.deepEqual(again.tables, {});

    // Their keys are revoked; the other's still works. The export about them ended with its key.
    const revoked = await api.call('GET', '/v1/me', { key: alice.key });
    t.is(revoked.status, 401);
    t.is(revoked.body.error.code, 'revoked_api_key');
    t.is((await api.call('GET', '/v1/me', { key: bob.key })).status, 200);
    const ended = await api.call('GET', `/v1/gdpr/exports/${before.body.id}`, { key: bob.key });
    t.is(ended.body.status, 'expired');
    t.is(ended.body.download_url, null);
    t.is((await fetch(before.body.download_url)).status, 410);
  },
);
