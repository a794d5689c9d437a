import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { z } from 'zod';
import { sql } from '../lib/db/sql.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// Legal documents and their acceptance, through the API, and GET /v1/gdpr/acceptances as the spec
// has it: one entry per published French document, derived from the newest 500 `legal.*` audit
// entries, with a summary. Documents are global: tests that publish use a slug of their own, and
// compare with the documents listed at that moment rather than with a fixed count.

const run = promisify(execFile);

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Legal');
});
test.after.always(async () => {
  await api?.close();
});

const today = () => new Date().toISOString().slice(0, 10);

async function publish(slug: string, version: string, effectiveDate = today()) {
  const file = join(tmpdir(), `valise-legal-${randomBytes(4).toString('hex')}.txt`);
  await writeFile(file, `Texte de ${slug}, version ${version}.\n`);
  return run('npm', [
    'run',
    '-s',
    'admin',
    '--',
    'legal-publish',
    '--slug',
    slug,
    '--version',
    version,
    '--effective-date',
    effectiveDate,
    '--title',
    `Document ${slug}`,
    '--body-file',
    file,
  ]);
}

test('the seeded documents are published in French, each with its current version and body', async (t) => {
  const list = await api.call('GET', '/v1/legal/documents', { key: ws.keys.sandbox });
  t.is(list.status, 200);
  t.is(list.body.object, 'list');
  const slugs = list.body.data.map((d: { slug: string }) => d.slug);
  for (const slug of ['conditions-utilisation', 'politique-confidentialite', 'accord-traitement-donnees']) {
    t.true(slugs.includes(slug), slug);
  }
  for (const document of list.body.data) t.is(document.language, 'fr');
  const one = await api.call('GET', '/v1/legal/documents/politique-confidentialite', { key: ws.keys.live });
  t.is(one.status, 200);
  t.regex(one.body.body, /RGPD/);
  t.is((await api.call('GET', '/v1/legal/documents/nope', { key: ws.keys.live })).status, 404);
  t.is((await api.call('GET', '/v1/legal/documents')).status, 401);
});

test("accepting records the user's acceptance; a new version makes it outdated", async (t) => {
  const key = ws.keys.live;
  const slug = `essai-${randomBytes(3).toString('hex')}`;
  await publish(slug, 'v1');

  const before = await api.call('GET', '/v1/gdpr/acceptances', { key });
  t.is(before.status, 200);
  const documents = (await api.call('GET', '/v1/legal/documents', { key })).body.data;
  t.is(before.body.summary.total_documents, documents.length);
  const entry = (body: { data: { slug: string }[] }) =>
    body.data.find((e) => e.slug === slug) as Record<string, unknown>;
  t.like(entry(before.body), { current_version: 'v1', accepted_version: null, accepted_at: null, up_to_date: false });

  const wrong = await api.call('POST', '/v1/legal/acceptances', { key, body: { slug, version: 'v0' } });
  t.is(wrong.status, 409);
  t.is(wrong.body.error.code, 'validation_error');
  t.is(wrong.body.error.param, 'version');
  t.is(wrong.body.error.current_version, 'v1');
  const accepted = await api.call('POST', '/v1/legal/acceptances', { key, body: { slug, version: 'v1' } });
  t.is(accepted.status, 201);
  t.is(accepted.body.user_id, ws.user_id);

  const after = await api.call('GET', '/v1/gdpr/acceptances', { key });
  t.like(entry(after.body), { current_version: 'v1', accepted_version: 'v1', up_to_date: true });
  t.is(after.body.summary.accepted_up_to_date, before.body.summary.accepted_up_to_date + 1);
  t.is(after.body.summary.never_accepted, before.body.summary.never_accepted - 1);

  // The acceptance is an audit entry of the key's environment, with its document and version.
  const audit = await api.call('GET', '/v1/audit?action=legal.accepted', { key });
  t.like(audit.body.data[0], { action: 'legal.accepted', status: 'success', actor_id: ws.user_id });
  t.like(audit.body.data[0].metadata, { slug, version: 'v1' });
  const otherEnvironment = await api.call('GET', '/v1/gdpr/acceptances', { key: ws.keys.test });
  t.like(entry(otherEnvironment.body), { accepted_version: null });

  // v2, in effect today: v1's acceptance is outdated. A version in the future is not current yet.
  await publish(slug, 'v2');
  await publish(slug, 'v3', '2999-01-01');
  const outdated = await api.call('GET', '/v1/gdpr/acceptances', { key });
  t.like(entry(outdated.body), { current_version: 'v2', accepted_version: 'v1', up_to_date: false });
  t.is(outdated.body.summary.acceptance_outdated, after.body.summary.acceptance_outdated + 1);
  const { summary } = outdated.body;
  t.is(summary.accepted_up_to_date + summary.acceptance_outdated + summary.never_accepted, summary.total_documents);

  // A version is published once.
  const again = await publish(slug, 'v2').catch((error: { code: number; stderr: string }) => error);
  t.true('code' in again && again.code === 1, 'publishing an existing version fails');
});

test('acceptances need gdpr:export and take no query parameters', async (t) => {
  const reader = await ws.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['transfers:read'] });
  const refused = await api.call('GET', '/v1/gdpr/acceptances', { key: reader.key });
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'scope_missing');
  const exporter = await ws.mintKey({ name: 'exporter', key_type: 'restricted', scopes: ['gdpr:export'] });
  t.is((await api.call('GET', '/v1/gdpr/acceptances', { key: exporter.key })).status, 200);
  const unknown = await api.call('GET', '/v1/gdpr/acceptances?limit=5', { key: ws.keys.live });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'validation_error');
});

test('only the newest 500 legal audit entries are read', async (t) => {
  // 500 newer `legal.*` entries of the tenant push an acceptance out of the window.
  const own = await api.workspace('Legal window');
  const key = own.keys.live;
  const current = (await api.call('GET', '/v1/legal/documents/conditions-utilisation', { key })).body.version;
  await api.call('POST', '/v1/legal/acceptances', { key, body: { slug: 'conditions-utilisation', version: current } });
  const entry = async () =>
    (await api.call('GET', '/v1/gdpr/acceptances', { key })).body.data.find(
      (e: { slug: string }) => e.slug === 'conditions-utilisation',
    );
  t.is((await entry()).accepted_version, current);
  await api.services.db.query(sql.type(z.object({}))`
    INSERT INTO audit_log (workspace_id, environment, actor_id, action, status, created_at)
    SELECT ${own.workspace_id}, 'live', ${own.user_id}, 'legal.viewed', 'success', ms_now() + (n || ' ms')::interval
    FROM generate_series(1, 500) n`);
  t.is((await entry()).accepted_version, null);
});
