import test from 'ava';
import { z } from 'zod';
import { eraseAuditPersonalData, purgeAuditBefore } from '../lib/audit/retention.ts';
import { sql } from '../lib/db/sql.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { runCommand } from './helpers/command.ts';

// The audit log's hash chain (docs/audit.md, "Integrity"): entries are written through the real
// API, then altered directly in PostgreSQL as someone with database access would, and both the
// route and the operator's command must name the first broken link.

let api: TestApi;
test.before(async () => {
  api = await startApi({ TRUST_PROXY_HOPS: '1' });
});
test.after.always(() => api.close());

const linkRow = z.object({
  id: z.uuid(),
  seq: z.coerce.number(),
  created_at: z.date(),
  ip_address: z.string().nullable(),
});
type Link = z.infer<typeof linkRow>;

/** A workspace with `count` entries in its live chain, made through the API, and those entries oldest first. */
async function auditedWorkspace(name: string, count: number): Promise<{ ws: TestWorkspace; links: Link[] }> {
  const ws = await api.workspace(name);
  for (let i = 0; i < count; i++) {
    const created = await api.call('POST', '/v1/api-keys', {
      key: ws.keys.live,
      body: { name: `key ${i}`, key_type: 'restricted', scopes: ['transfers:read'] },
      headers: { 'x-forwarded-for': `198.51.100.${i + 1}` },
    });
    if (created.status !== 201) throw new Error(`${created.status} ${created.text}`);
    // Entries a few milliseconds apart, so that a swap of two dates is a change.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { ws, links: await linksOf(ws) };
}

async function linksOf(ws: TestWorkspace): Promise<Link[]> {
  const rows = await api.services.db.any(sql.type(linkRow)`
    SELECT id, seq, created_at, ip_address FROM audit_log
    WHERE workspace_id = ${ws.workspace_id} AND environment = 'live' ORDER BY seq`);
  return [...rows];
}

async function verifyByRoute(ws: TestWorkspace) {
  const response = await api.call('GET', '/v1/audit/verify', { key: ws.keys.live });
  if (response.status !== 200) throw new Error(`${response.status} ${response.text}`);
  return response.body;
}

async function verifyByCommand(ws: TestWorkspace) {
  const result = await runCommand(
    'npm',
    ['run', '-s', 'admin', '--', 'audit-verify', '--workspace', ws.workspace_id, '--environment', 'live', '--json'],
    { timeoutMs: 60_000 },
  );
  return { code: result.code, body: JSON.parse(result.stdout), stderr: result.stderr };
}

test('an intact chain verifies, by the route and by the admin command', async (t) => {
  const { ws, links } = await auditedWorkspace('Intact', 4);
  t.deepEqual(
    links.map((l) => l.seq),
    [1, 2, 3, 4],
  );
  const verified = await verifyByRoute(ws);
  t.like(verified, { object: 'audit_verification', valid: true, entries_checked: 4, first_broken: null });
  t.deepEqual(verified.anchor, { seq: 0, hash: '0'.repeat(64) });
  t.is(verified.head.seq, 4);
  const command = await verifyByCommand(ws);
  t.is(command.code, 0, command.stderr);
  t.like(command.body, { valid: true, entries_checked: 4 });
});

test('an edited entry is found at that entry', async (t) => {
  const { ws, links } = await auditedWorkspace('Edited', 5);
  const edited = links[2] as Link;
  await api.services.db.query(sql.unsafe`UPDATE audit_log SET action = 'api_key.revoke' WHERE id = ${edited.id}`);
  const verified = await verifyByRoute(ws);
  t.false(verified.valid);
  t.is(verified.entries_checked, 2);
  t.like(verified.first_broken, { id: edited.id, seq: 3, reason: 'edited' });
  const command = await verifyByCommand(ws);
  t.not(command.code, 0);
  t.like(command.body.first_broken, { id: edited.id, seq: 3, reason: 'edited' });
});

test('an edited personal field without the erasure marker is found', async (t) => {
  const { ws, links } = await auditedWorkspace('Edited address', 3);
  const edited = links[1] as Link;
  await api.services.db.query(sql.unsafe`UPDATE audit_log SET ip_address = '192.0.2.99' WHERE id = ${edited.id}`);
  t.like((await verifyByRoute(ws)).first_broken, { id: edited.id, reason: 'edited' });
});

test('a deleted entry is found on the entry after the gap', async (t) => {
  const { ws, links } = await auditedWorkspace('Deleted', 5);
  await api.services.db.query(sql.unsafe`DELETE FROM audit_log WHERE id = ${(links[2] as Link).id}`);
  const after = links[3] as Link;
  const verified = await verifyByRoute(ws);
  t.false(verified.valid);
  t.like(verified.first_broken, { id: after.id, seq: 4, reason: 'missing' });
  const command = await verifyByCommand(ws);
  t.not(command.code, 0);
  t.like(command.body.first_broken, { id: after.id, seq: 4, reason: 'missing' });
});

test('a pair reordered by swapping their seq is found on the first of the pair in chain order', async (t) => {
  const { ws, links } = await auditedWorkspace('Reordered seq', 5);
  const [a, b] = [links[1] as Link, links[2] as Link];
  await api.services.db.transaction(async (tx) => {
    await tx.query(sql.unsafe`UPDATE audit_log SET seq = -1 WHERE id = ${a.id}`);
    await tx.query(sql.unsafe`UPDATE audit_log SET seq = ${a.seq} WHERE id = ${b.id}`);
    await tx.query(sql.unsafe`UPDATE audit_log SET seq = ${b.seq} WHERE id = ${a.id}`);
  });
  // b now comes first, at a's place.
  const verified = await verifyByRoute(ws);
  t.like(verified.first_broken, { id: b.id, seq: a.seq, reason: 'reordered' });
  const command = await verifyByCommand(ws);
  t.not(command.code, 0);
  t.like(command.body.first_broken, { id: b.id, seq: a.seq, reason: 'reordered' });
});

test('a pair reordered by swapping their dates is found on the first of the pair', async (t) => {
  const { ws, links } = await auditedWorkspace('Reordered dates', 5);
  const [a, b] = [links[1] as Link, links[2] as Link];
  t.true(a.created_at < b.created_at);
  await api.services.db.transaction(async (tx) => {
    await tx.query(sql.unsafe`UPDATE audit_log SET created_at = ${b.created_at.toISOString()} WHERE id = ${a.id}`);
    await tx.query(sql.unsafe`UPDATE audit_log SET created_at = ${a.created_at.toISOString()} WHERE id = ${b.id}`);
  });
  const verified = await verifyByRoute(ws);
  t.like(verified.first_broken, { id: a.id, seq: a.seq, reason: 'reordered' });
  const command = await verifyByCommand(ws);
  t.not(command.code, 0);
  t.like(command.body.first_broken, { id: a.id, seq: a.seq, reason: 'reordered' });
});

test('a retention purge moves the anchor: the rest of the chain, and what follows, still verifies', async (t) => {
  const { ws, links } = await auditedWorkspace('Purged', 5);
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const purged = await purgeAuditBefore(api.services.db, tenant, (links[3] as Link).created_at);
  t.is(purged, 3);
  const verified = await verifyByRoute(ws);
  t.like(verified, { valid: true, entries_checked: 2, first_broken: null });
  t.is(verified.anchor.seq, 3);
  await auditedWorkspaceEntry(ws);
  t.like(await verifyByRoute(ws), { valid: true, entries_checked: 3 });
  // Everything purged: the next entry links to the anchor.
  t.is(await purgeAuditBefore(api.services.db, tenant, new Date(Date.now() + 60_000)), 3);
  await auditedWorkspaceEntry(ws);
  t.like(await verifyByRoute(ws), { valid: true, entries_checked: 1, anchor: { seq: 6 }, head: { seq: 7 } });
});

test('an erasure removes personal fields and keeps the chain valid; a forged value on an erased entry is found', async (t) => {
  const { ws, links } = await auditedWorkspace('Erased', 3);
  const erased = await eraseAuditPersonalData(api.services.db, ws.workspace_id, { ipAddresses: ['198.51.100.2'] });
  t.is(erased, 1);
  const after = await linksOf(ws);
  t.is(after[1]?.ip_address, null);
  t.is(after[0]?.ip_address, '198.51.100.1');
  t.like(await verifyByRoute(ws), { valid: true, entries_checked: 3 });

  t.is(await eraseAuditPersonalData(api.services.db, ws.workspace_id, { actorIds: [ws.user_id] }), 2);
  t.like(await verifyByRoute(ws), { valid: true, entries_checked: 3 });

  const forged = links[2] as Link;
  await api.services.db.query(sql.unsafe`UPDATE audit_log SET ip_address = '192.0.2.1' WHERE id = ${forged.id}`);
  t.like((await verifyByRoute(ws)).first_broken, { id: forged.id, reason: 'edited' });
});

test('repeated authentication failures collapse into one entry without breaking the chain', async (t) => {
  const ws = await api.workspace('Collapsed');
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'soon revoked', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  await api.call('DELETE', `/v1/api-keys/${created.body.id}`, { key: ws.keys.live });
  for (let i = 0; i < 3; i++) {
    t.is((await api.call('GET', '/v1/me', { key: created.body.key })).status, 401);
  }
  await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { name: 'after' } });
  const log = await api.call('GET', '/v1/audit?action=auth.failed', { key: ws.keys.live });
  t.is(log.body.data.length, 1);
  t.is(log.body.data[0].metadata.count, 3);
  t.like(await verifyByRoute(ws), { valid: true, entries_checked: 4 });
});

test('concurrent writers of one chain take turns: no fork, no gap', async (t) => {
  const ws = await api.workspace('Concurrent');
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      api.call('POST', '/v1/api-keys', {
        key: ws.keys.live,
        body: { name: `parallel ${i}`, key_type: 'restricted', scopes: ['transfers:read'] },
      }),
    ),
  );
  const verified = await verifyByRoute(ws);
  t.like(verified, { valid: true, entries_checked: 12 });
});

async function auditedWorkspaceEntry(ws: TestWorkspace) {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'later', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  if (created.status !== 201) throw new Error(`${created.status} ${created.text}`);
}

test('the chain is per environment: test-environment entries do not touch the live chain', async (t) => {
  const { ws } = await auditedWorkspace('Environments', 2);
  await api.call('POST', '/v1/api-keys', {
    key: ws.keys.test,
    body: { name: 'test env', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  t.like(await verifyByRoute(ws), { valid: true, entries_checked: 2 });
  const inTest = await api.call('GET', '/v1/audit/verify', { key: ws.keys.test });
  t.like(inTest.body, { valid: true, entries_checked: 1 });
});
