import test from 'ava';
import { type ExportedEntryJson, exportedEntryHash, exportedPersonalDigest } from '../lib/audit/chain.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// GET /v1/audit/export (docs/audit.md, "Export"): the log as NDJSON or CSV through the real API,
// confined to the caller's workspace and environment, behind the `audit:export` scope, with cells
// a spreadsheet would run defused, and verifiable offline from the file alone.

let api: TestApi;
test.before(async () => {
  api = await startApi({ TRUST_PROXY_HOPS: '1' });
});
test.after.always(() => api.close());

const HOSTILE_AGENT = '=HYPERLINK("http://evil.example/?x","click, here")';

/** A workspace whose live chain holds `count` key creations (and the entries they make), one hostile. */
async function auditedWorkspace(name: string, count: number): Promise<TestWorkspace> {
  const ws = await api.workspace(name);
  for (let i = 0; i < count; i++) {
    const response = await api.call('POST', '/v1/api-keys', {
      key: ws.keys.live,
      body: { name: `key ${i}`, key_type: 'restricted', scopes: ['transfers:read'] },
      headers: { 'x-forwarded-for': '8.8.8.8', 'user-agent': i === 0 ? HOSTILE_AGENT : 'export-test/1.0' },
    });
    if (response.status !== 201) throw new Error(`${response.status} ${response.text}`);
  }
  return ws;
}

async function exportOf(key: string, query = '') {
  const response = await fetch(`${api.url}/v1/audit/export${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function ndjson(text: string): ExportedEntryJson[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ExportedEntryJson);
}

/** RFC 4180, as a strict reader takes it: quoted fields may hold commas, quotes (doubled) and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error('the last line has no CRLF');
  return rows;
}

test('NDJSON: every entry of the chain, oldest first, each verifiable offline from the file alone', async (t) => {
  const ws = await auditedWorkspace('Export NDJSON', 4);
  const response = await exportOf(ws.keys.live);
  t.is(response.status, 200, response.text);
  t.is(response.headers.get('content-type'), 'application/x-ndjson');
  t.regex(
    response.headers.get('content-disposition') ?? '',
    /^attachment; filename="audit-live-\d{8}T\d{6}Z\.ndjson"$/,
  );
  const entries = ndjson(response.text);
  t.is(entries.length, 4);
  t.true(entries.every((e) => e.workspace_id === ws.workspace_id && e.environment === 'live'));
  t.deepEqual(
    entries.map((e) => e.seq),
    [1, 2, 3, 4],
  );
  let previous = '0'.repeat(64);
  for (const entry of entries) {
    t.is(entry.prev_hash, previous);
    t.is(exportedEntryHash(entry), entry.entry_hash);
    t.is(exportedPersonalDigest(entry), entry.personal_digest);
    previous = entry.entry_hash;
  }
  t.is(entries[0]?.user_agent, HOSTILE_AGENT, 'NDJSON carries values as they are');
  t.is(entries[1]?.country_code, 'US');
});

test('filters: those of GET /v1/audit; the export is itself audited with them', async (t) => {
  const ws = await auditedWorkspace('Export filters', 2);
  const midway = new Date();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'late', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  await api.call('DELETE', `/v1/api-keys/${created.body.id}`, { key: ws.keys.live });

  const revoked = ndjson((await exportOf(ws.keys.live, '?action=api_key.revoke')).text);
  t.deepEqual(
    revoked.map((e) => e.resource_id),
    [created.body.id],
  );
  const since = ndjson((await exportOf(ws.keys.live, `?since=${midway.toISOString()}`)).text);
  t.deepEqual(
    since.map((e) => e.action),
    ['api_key.create', 'api_key.revoke', 'audit.exported'],
  );
  t.is(ndjson((await exportOf(ws.keys.live, `?until=${midway.toISOString()}&resource_type=api_key`)).text).length, 2);
  t.is(ndjson((await exportOf(ws.keys.live, '?actor_id=00000000-0000-4000-8000-000000000000')).text).length, 0);

  const exported = await api.call('GET', '/v1/audit?action=audit.exported&limit=10', { key: ws.keys.live });
  const first = exported.body.data.at(-1);
  t.is(first.status, 'success');
  t.is(first.resource_type, 'audit_log');
  t.deepEqual(first.metadata.filters, { action: 'api_key.revoke' });
  t.is(first.metadata.format, 'ndjson');
});

test('CSV: RFC 4180 with a header row, hostile values quoted and defused as formulas', async (t) => {
  const ws = await auditedWorkspace('Export CSV', 2);
  const response = await exportOf(ws.keys.live, '?format=csv');
  t.is(response.status, 200, response.text);
  t.is(response.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(response.headers.get('content-disposition') ?? '', /filename="audit-live-\d{8}T\d{6}Z\.csv"$/);
  const [header = [], ...rows] = parseCsv(response.text);
  t.deepEqual(header.slice(0, 3), ['id', 'seq', 'created_at']);
  t.true(header.includes('entry_hash') && header.includes('prev_hash'));
  t.is(rows.length, 2);
  const agent = header.indexOf('user_agent');
  t.is(rows[0]?.[agent], `'${HOSTILE_AGENT}`, 'a formula is prefixed with a quote, and its comma and quotes survive');
  t.true(response.text.includes('"\'=HYPERLINK(""http://evil.example/?x"",""click, here"")"'));
  t.is(rows[1]?.[agent], 'export-test/1.0');
  t.is(rows[0]?.[header.indexOf('country_code')], 'US');
  t.is(rows[0]?.[header.indexOf('actor_id')], ws.user_id);
  t.deepEqual(JSON.parse(rows[0]?.[header.indexOf('metadata')] ?? ''), { status_code: 201 });
});

test("isolation: another workspace's keys and the other environments' keys export none of its entries", async (t) => {
  const owner = await auditedWorkspace('Export owner', 2);
  const other = await auditedWorkspace('Export other', 1);
  const live = ndjson((await exportOf(owner.keys.live)).text);
  t.is(live.length, 2);
  const ownIds = new Set(live.map((e) => e.id));
  for (const key of [other.keys.live, owner.keys.test, owner.keys.sandbox, other.keys.test]) {
    const response = await exportOf(key);
    t.is(response.status, 200, response.text);
    const entries = ndjson(response.text);
    t.false(
      entries.some((e) => ownIds.has(e.id) || (e.workspace_id === owner.workspace_id && e.environment === 'live')),
    );
    t.false(response.text.includes(owner.workspace_id) && key === other.keys.live);
  }
  const csv = await exportOf(other.keys.live, '?format=csv');
  t.false(csv.text.includes(owner.workspace_id));
});

test('scope: audit:read alone does not export; a key that names audit:export does', async (t) => {
  const ws = await auditedWorkspace('Export scope', 1);
  const reader = await ws.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['audit:read'] });
  const refused = await exportOf(reader.key);
  t.is(refused.status, 403);
  t.like(JSON.parse(refused.text).error, { code: 'scope_missing', required_scope: 'audit:export' });
  t.is((await api.call('GET', '/v1/audit/verify', { key: reader.key })).status, 200);
  const exporter = await ws.mintKey({ name: 'exporter', key_type: 'restricted', scopes: ['audit:export'] });
  const allowed = await exportOf(exporter.key);
  t.is(allowed.status, 200, allowed.text);
  t.true(ndjson(allowed.text).length >= 1);
  t.is((await exportOf(ws.keys.live, '?format=xml')).status, 400);
});
