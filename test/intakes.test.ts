import { randomBytes } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import test from 'ava';
import { sql } from '../lib/db/sql.ts';
import {
  generateIntakeKeyPair,
  type IntakeKem,
  unwrapContentKey,
  wrapContentKey,
} from '../sdk/src/crypto/intake-envelope.ts';
import { fileKey } from '../sdk/src/crypto/link-key.ts';
import { createDecryptStream, createEncryptStream, generateKey } from '../sdk/src/crypto/val1.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { mailsTo, uniqueAddress } from './helpers/mail.ts';
import { content, EICAR, put } from './helpers/transfers.ts';

// Secure intakes end to end (docs/intakes.md): an owner who holds a private key
// the server never sees, a submitter with only a publishable key, and the
// documents' life from upload to retention.

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Intakes');
});
test.after.always(() => api.close());

const CHUNK = 65_536;
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

async function through(stream: TransformStream<Uint8Array, Uint8Array>, data: Uint8Array): Promise<Buffer> {
  const out = new Response(new Blob([new Uint8Array(data)]).stream().pipeThrough(stream));
  return Buffer.from(await out.arrayBuffer());
}

async function createE2eIntake(kem: IntakeKem, extra: Record<string, unknown> = {}) {
  const pair = await generateIntakeKeyPair(kem);
  const created = await api.call('POST', '/v1/intakes', {
    key: ws.keys.live,
    body: { title: `Passports (${kem})`, owner_public_key: { kem, public_key: b64(pair.publicKey) }, ...extra },
  });
  return { pair, created };
}

/** What a submitter's browser does: seal each file to a fresh content key, wrap it to the owner, upload. */
async function submitE2e(intakeId: string, cip: string, kem: IntakeKem, publicKey: string, files: Buffer[]) {
  const contentKey = generateKey();
  const wrapped = await wrapContentKey({
    kem,
    publicKey: Buffer.from(publicKey, 'base64url'),
    contentKey,
    intakeId,
  });
  const ivs = files.map(() => randomBytes(7));
  const started = await api.call('POST', `/v1/intakes/${intakeId}/submissions`, {
    key: cip,
    body: {
      files: files.map((data, i) => ({
        name: `scan-${i}.pdf`,
        size: data.length,
        iv: b64(ivs[i] ?? new Uint8Array()),
      })),
      client_reference: 'CASE-42',
      metadata: { case: 42 },
      envelope: {
        kem,
        wrapped_symmetric_key: b64(Buffer.concat([wrapped.enc, wrapped.wrappedKey])),
        chunk_size: CHUNK,
      },
    },
  });
  if (started.status !== 201) throw new Error(`submission: ${started.status} ${started.text}`);
  for (const [i, entry] of (
    started.body.upload_urls as Array<{ file_id: string; url: string; size: number }>
  ).entries()) {
    const data = files[i] ?? Buffer.alloc(0);
    const key = await fileKey(contentKey, entry.file_id, 2);
    const blob = await through(
      createEncryptStream({
        key,
        plaintextSize: data.length,
        segmentSize: CHUNK,
        noncePrefix: ivs[i] ?? randomBytes(7),
      }),
      data,
    );
    if (blob.length !== entry.size) throw new Error(`blob ${blob.length} != ${entry.size}`);
    const stored = await put(entry.url, blob);
    if (stored.status !== 200) throw new Error(`upload: ${stored.status}`);
  }
  return { started, contentKey };
}

async function waitForDocument(intakeId: string, docId: string, ready: (doc: any) => boolean, key = ws.keys.live) {
  return eventually(async () => {
    const got = await api.call('GET', `/v1/intakes/${intakeId}/documents/${docId}`, { key });
    return got.status === 200 && ready(got.body) ? got : undefined;
  }, 60_000);
}

/** The owner's side: download each blob, open the envelope with the private key, decrypt. */
async function openDocument(doc: any, intakeId: string, kem: IntakeKem, privateKey: Uint8Array) {
  const wrapped = Buffer.from(doc.envelope.wrapped_symmetric_key, 'base64url');
  const encSize = kem === 'MLKEM768-X25519' ? 1120 : 32;
  const contentKey = await unwrapContentKey({
    kem,
    privateKey,
    enc: wrapped.subarray(0, encSize),
    wrappedKey: wrapped.subarray(encSize),
    intakeId,
  });
  const opened: Buffer[] = [];
  for (const file of doc.files) {
    const blob = Buffer.from(await (await fetch(file.download_url)).arrayBuffer());
    const key = await fileKey(new Uint8Array(contentKey), file.id, 2);
    opened.push(await through(createDecryptStream({ key, blobSize: blob.length }), blob));
  }
  return { opened, contentKey };
}

async function storedObjects(intakeId: string): Promise<Buffer[]> {
  const { client, bucket } = api.services.objects;
  const listed = await client.send(
    new ListObjectsV2Command({ Bucket: bucket, Prefix: `live/${ws.workspace_id}/intakes/${intakeId}/` }),
  );
  const blobs: Buffer[] = [];
  for (const object of listed.Contents ?? []) {
    // An object removed between the listing and the read (retention at work) is gone: skip it.
    const got = await client
      .send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }))
      .catch((error: Error) => (error.name === 'NoSuchKey' ? null : Promise.reject(error)));
    if (got) blobs.push(Buffer.from(await (got.Body?.transformToByteArray() ?? new Uint8Array())));
  }
  return blobs;
}

for (const kem of ['MLKEM768-X25519', 'DHKEM-X25519'] as const) {
  test(`e2e_asym round trip (${kem}): submitted through a cip_ key, opened only with the owner's private key`, async (t) => {
    const { pair, created } = await createE2eIntake(kem, { metadata_policy: 'allow' });
    t.is(created.status, 201, created.text);
    const intake = created.body;
    t.is(intake.encryption_mode, 'e2e_asym');
    t.regex(intake.id, /^in_[0-9a-v]{26}$/);
    t.regex(intake.publishable_key.key, /^cip_live_[0-9A-Za-z]{32}$/);
    const cip = intake.publishable_key.key as string;

    const form = await api.call('GET', `/v1/intakes/${intake.id}/form`, { key: cip });
    t.is(form.status, 200);
    t.is(form.body.owner_public_key.public_key, b64(pair.publicKey));

    const files = [content(300 * 1024, 'VALISE-INTAKE-SECRET'), content(70_000, 'VALISE-INTAKE-SECRET')];
    const { started, contentKey } = await submitE2e(intake.id, cip, kem, form.body.owner_public_key.public_key, files);
    const docId = started.body.document.id as string;
    const received = await waitForDocument(intake.id, docId, (doc) => doc.status === 'received');
    const doc = received.body;
    t.is(doc.object, 'intake_document');
    t.is(doc.files_count, 2);
    t.is(doc.encrypted, true);
    t.is(doc.source, 'api');
    t.is(doc.client_reference, 'CASE-42');
    t.deepEqual(doc.metadata, { case: 42 });
    t.is(doc.scan_status, 'not_scanned_e2e');
    t.is(doc.envelope.chunk_size, CHUNK);
    t.is(doc.encryption.mode, 'e2e_asym');
    t.deepEqual(Object.keys(doc.encryption.files).sort(), ['scan-0.pdf', 'scan-1.pdf']);
    t.is(
      doc.total_size_bytes,
      doc.files.reduce((sum: number, f: any) => sum + f.encrypted_size_bytes, 0),
    );
    for (const file of doc.files) t.is(file.download_expires_in, 300);

    const { opened } = await openDocument(doc, intake.id, kem, pair.privateKey);
    t.true(opened[0]?.equals(files[0] ?? Buffer.alloc(1)));
    t.true(opened[1]?.equals(files[1] ?? Buffer.alloc(1)));

    // Fresh URLs on each call.
    const again = await api.call('GET', `/v1/intakes/${intake.id}/documents/${docId}`, { key: ws.keys.live });
    t.not(again.body.files[0].download_url, doc.files[0].download_url);

    // Neither storage nor the database holds the plaintext or the content key.
    const blobs = await storedObjects(intake.id);
    t.is(blobs.length, 2);
    for (const blob of blobs) t.false(blob.includes('VALISE-INTAKE-SECRET'));
    const dump = await api.services.db.anyFirst(sql.unsafe`
      SELECT row_to_json(x)::text AS row FROM (
        SELECT d.*, f.* FROM intake_documents d JOIN intake_files f ON f.document_id = d.id WHERE d.intake_id = ${intake.id}
      ) x`);
    const rows = dump.join('\n');
    for (const form of [
      Buffer.from(contentKey).toString('hex'),
      b64(contentKey),
      Buffer.from(contentKey).toString('base64'),
    ]) {
      t.false(rows.includes(form));
    }
    t.false(rows.includes('VALISE-INTAKE-SECRET'));
  });
}

test('a cip_ key submits to its own intake and reads nothing else', async (t) => {
  const { created } = await createE2eIntake('DHKEM-X25519');
  const other = await createE2eIntake('DHKEM-X25519');
  const cip = created.body.publishable_key.key as string;
  for (const path of ['/v1/me', '/v1/intakes', `/v1/intakes/${created.body.id}`, '/v1/transfers', '/v1/api-keys']) {
    const refused = await api.call('GET', path, { key: cip });
    t.is(refused.status, 401, path);
    t.is(refused.body.error.code, 'invalid_api_key', path);
  }
  const documents = await api.call('GET', `/v1/intakes/${created.body.id}/documents`, { key: cip });
  t.is(documents.status, 401);
  const otherForm = await api.call('GET', `/v1/intakes/${other.created.body.id}/form`, { key: cip });
  t.is(otherForm.status, 404);
  t.is(otherForm.body.error.code, 'not_found');
  // An API key is not a publishable key.
  const withApiKey = await api.call('GET', `/v1/intakes/${created.body.id}/form`, { key: ws.keys.live });
  t.is(withApiKey.status, 401);

  const revoked = await api.call(
    'DELETE',
    `/v1/intakes/${created.body.id}/publishable-keys/${created.body.publishable_key.id}`,
    { key: ws.keys.live },
  );
  t.is(revoked.status, 200);
  t.truthy(revoked.body.revoked_at);
  const after = await api.call('GET', `/v1/intakes/${created.body.id}/form`, { key: cip });
  t.is(after.status, 401);
  t.is(after.body.error.code, 'revoked_api_key');
});

test('retention deletes the document: keys destroyed, blobs removed, then 410', async (t) => {
  const { pair, created } = await createE2eIntake('DHKEM-X25519', { retention_hours: 8 / 3600 });
  const intake = created.body;
  const { started } = await submitE2e(intake.id, intake.publishable_key.key, 'DHKEM-X25519', b64(pair.publicKey), [
    content(1000),
  ]);
  const docId = started.body.document.id;
  const received = await waitForDocument(intake.id, docId, (doc) => doc.status === 'received');
  t.truthy(received.body.retention_until);
  const gone = await eventually(async () => {
    const got = await api.call('GET', `/v1/intakes/${intake.id}/documents/${docId}`, { key: ws.keys.live });
    return got.status === 410 ? got : undefined;
  }, 60_000);
  t.is(gone.body.error.code, 'not_found');
  await eventually(async () => ((await storedObjects(intake.id)).length === 0 ? true : undefined), 30_000);
  const row = (await api.services.db.one(
    sql.unsafe`SELECT status, wrapped_symmetric_key FROM intake_documents WHERE id = ${docId}`,
  )) as { status: string; wrapped_symmetric_key: string | null };
  t.is(row.status, 'deleted');
  t.is(row.wrapped_symmetric_key, null);
  // The old download URL no longer serves anything.
  const old = await fetch(received.body.files[0].download_url);
  t.is(old.status, 410);
});

test('server mode: files are sealed at rest, scanned, and an infected submission is rejected', async (t) => {
  const notify = uniqueAddress('intake-owner');
  const created = await api.call('POST', '/v1/intakes', {
    key: ws.keys.live,
    body: { title: 'Invoices', notify: [notify] },
  });
  t.is(created.status, 201, created.text);
  t.is(created.body.encryption_mode, 'server');
  const cip = created.body.publishable_key.key;
  const data = content(200 * 1024, 'VALISE-SERVER-SECRET');
  const clean = await api.call('POST', `/v1/intakes/${created.body.id}/submissions`, {
    key: cip,
    body: { files: [{ name: 'invoice.pdf', size: data.length, mime_type: 'application/pdf' }], metadata: { x: 1 } },
  });
  t.is(clean.status, 201, clean.text);
  t.is((await put(clean.body.upload_urls[0].url, data)).status, 200);
  const available = await waitForDocument(created.body.id, clean.body.document.id, (doc) => doc.status === 'available');
  t.is(available.body.scan_status, 'clean');
  t.false('metadata' in available.body, 'metadata_policy deny keeps none');
  t.is(available.body.envelope, null);
  const downloaded = Buffer.from(await (await fetch(available.body.files[0].download_url)).arrayBuffer());
  t.true(downloaded.equals(data));
  for (const blob of await storedObjects(created.body.id)) t.false(blob.includes('VALISE-SERVER-SECRET'));
  await eventually(async () => ((await mailsTo(notify)).length > 0 ? true : undefined));

  const eicar = Buffer.from(EICAR);
  const infected = await api.call('POST', `/v1/intakes/${created.body.id}/submissions`, {
    key: cip,
    body: { files: [{ name: 'eicar.com', size: eicar.length }] },
  });
  await put(infected.body.upload_urls[0].url, eicar);
  const rejected = await waitForDocument(
    created.body.id,
    infected.body.document.id,
    (doc) => doc.status === 'rejected',
  );
  t.is(rejected.body.scan_status, 'infected');
  t.is(rejected.body.files[0].download_url, null);
});

test('limits, envelopes and closed intakes are refused with the error envelope', async (t) => {
  const { pair, created } = await createE2eIntake('DHKEM-X25519', { limits: { max_files: 2, max_submissions: 1 } });
  const intake = created.body;
  const cip = intake.publishable_key.key;
  const expect = async (response: Promise<ApiResponse>, status: number, param: string | null) => {
    const got = await response;
    t.is(got.status, status, got.text);
    if (param !== null) t.is(got.body.error.param, param);
  };
  const submit = (body: unknown) => api.call('POST', `/v1/intakes/${intake.id}/submissions`, { key: cip, body });
  const envelope = { kem: 'DHKEM-X25519', wrapped_symmetric_key: b64(randomBytes(80)), chunk_size: CHUNK };
  const iv = b64(randomBytes(7));
  await expect(submit({ files: [] }), 400, 'files');
  await expect(submit({ files: [{ name: 'a', size: 1, iv }] }), 400, 'envelope');
  await expect(submit({ files: [1, 2, 3].map((i) => ({ name: `${i}`, size: 1, iv })), envelope }), 400, 'files');
  await expect(submit({ files: [{ name: 'a', size: 1 }], envelope }), 400, 'files.0.iv');
  await expect(
    submit({ files: [{ name: 'a', size: 1, iv }], envelope: { ...envelope, kem: 'MLKEM768-X25519' } }),
    400,
    'envelope.kem',
  );
  await expect(
    submit({ files: [{ name: 'a', size: 1, iv }], envelope: { ...envelope, wrapped_symmetric_key: 'AAAA' } }),
    400,
    'envelope.wrapped_symmetric_key',
  );
  await expect(
    submit({
      files: [
        { name: 'a', size: 1, iv },
        { name: 'a', size: 1, iv },
      ],
      envelope,
    }),
    400,
    'files.1.name',
  );
  await expect(submit({ files: [{ name: 'a\u0000b', size: 1, iv }], envelope }), 400, 'files.0.name');
  // mime_type is checked as a transfer's is (one definition, api/schemas.ts).
  for (const mime_type of ['not a type', 'text/html\r\nX-Injected: 1', 'text/plain; charset=utf-8', 'pdf', '']) {
    await expect(submit({ files: [{ name: 'a', size: 1, iv, mime_type }], envelope }), 400, 'files.0.mime_type');
  }
  // The one submission allowed closes the intake.
  await submitE2e(intake.id, cip, 'DHKEM-X25519', b64(pair.publicKey), [content(10)]);
  const closed = await api.call('GET', `/v1/intakes/${intake.id}`, { key: ws.keys.live });
  t.is(closed.body.status, 'closed');
  t.is(closed.body.closed_reason, 'max_submissions');
  await expect(submit({ files: [{ name: 'late', size: 1, iv }], envelope }), 410, null);
  // Raising the cap reopens it.
  const raised = await api.call('PATCH', `/v1/intakes/${intake.id}`, {
    key: ws.keys.live,
    body: { limits: { max_submissions: 5 } },
  });
  t.is(raised.body.status, 'open');

  const bad = [
    { title: '' },
    { title: 'x', owner_public_key: { kem: 'DHKEM-X25519', public_key: b64(randomBytes(31)) } },
    { title: 'x', encryption_mode: 'e2e_asym' },
    {
      title: 'x',
      encryption_mode: 'server',
      owner_public_key: { kem: 'DHKEM-X25519', public_key: b64(randomBytes(32)) },
    },
    { title: 'x', retention_hours: 0 },
    { title: 'x', notify: ['not-an-address'] },
  ];
  for (const body of bad) {
    const refused = await api.call('POST', '/v1/intakes', { key: ws.keys.live, body });
    t.is(refused.status, 400, JSON.stringify(body));
    t.is(refused.body.error.code, 'validation_error');
  }
});

test('a submitter retrying with its Idempotency-Key gets the same document, not a second one', async (t) => {
  const created = await api.call('POST', '/v1/intakes', { key: ws.keys.live, body: { title: 'Retries' } });
  const intakeId = created.body.id as string;
  const cip = created.body.publishable_key.key as string;
  const body = { files: [{ name: 'scan.pdf', size: 1000, mime_type: 'application/pdf' }] };
  const submit = (key: string, idempotencyKey: string, payload: unknown = body) =>
    api.call('POST', `/v1/intakes/${intakeId}/submissions`, {
      key,
      body: payload,
      headers: { 'idempotency-key': idempotencyKey },
    });

  const first = await submit(cip, 'retry-0001');
  t.is(first.status, 201, first.text);
  const replay = await submit(cip, 'retry-0001');
  t.is(replay.status, 201);
  t.is(replay.headers.get('x-service-idempotent-replay'), 'true');
  t.is(replay.body.document.id, first.body.document.id);
  t.deepEqual(replay.body.upload_urls, first.body.upload_urls);
  const changed = await submit(cip, 'retry-0001', { files: [{ name: 'other.pdf', size: 5 }] });
  t.is(changed.status, 409);
  t.is(changed.body.error.code, 'idempotency_conflict');

  // Another publishable key (another page) has a namespace of its own.
  const second = await api.call('POST', `/v1/intakes/${intakeId}/publishable-keys`, { key: ws.keys.live, body: {} });
  t.is(second.status, 201, second.text);
  const own = await submit(second.body.key, 'retry-0001');
  t.is(own.status, 201, own.text);
  t.is(own.headers.get('x-service-idempotent-replay'), null);
  t.not(own.body.document.id, first.body.document.id);

  const documents = await api.call('GET', `/v1/intakes/${intakeId}/documents`, { key: ws.keys.live });
  t.is(documents.body.data.length, 2);
  const stored = await api.services.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM idempotency_records WHERE publishable_key_id IS NOT NULL
      AND response_sealed NOT LIKE ${`%${first.body.upload_urls[0].url}%`}`);
  t.true(Number(stored) >= 2, 'the replayed upload URLs are stored sealed, never in clear');
});

test('owner routes: list, update, close, delete; events recorded; scopes enforced', async (t) => {
  const own = await api.workspace('Intake owner');
  const created = await api.call('POST', '/v1/intakes', { key: own.keys.live, body: { title: 'Contracts' } });
  const id = created.body.id as string;
  const list = await api.call('GET', '/v1/intakes', { key: own.keys.live });
  t.deepEqual(
    list.body.data.map((i: { id: string }) => i.id),
    [id],
  );
  const updated = await api.call('PATCH', `/v1/intakes/${id}`, {
    key: own.keys.live,
    body: { title: 'Signed contracts', expires_in_hours: 2 },
  });
  t.is(updated.body.title, 'Signed contracts');
  t.truthy(updated.body.expires_at);
  const closed = await api.call('POST', `/v1/intakes/${id}/close`, { key: own.keys.live });
  t.is(closed.body.status, 'closed');
  t.is(closed.body.closed_reason, 'owner');

  const reader = await own.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['intake_read'] });
  t.is((await api.call('GET', `/v1/intakes/${id}`, { key: reader.key })).status, 200);
  const denied = await api.call('POST', `/v1/intakes/${id}/close`, { key: reader.key });
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'scope_missing');

  const deleted = await api.call('DELETE', `/v1/intakes/${id}`, { key: own.keys.live });
  t.is(deleted.status, 200);
  t.true(deleted.body.deleted);
  t.is((await api.call('GET', `/v1/intakes/${id}`, { key: own.keys.live })).status, 404);
  t.is((await api.call('DELETE', `/v1/intakes/${id}`, { key: own.keys.live })).status, 404);

  const types = await api.services.db.anyFirst(sql.unsafe`
    SELECT type FROM events WHERE workspace_id = ${own.workspace_id} AND type LIKE 'request.%' ORDER BY created_at`);
  t.deepEqual(types, ['request.created', 'request.completed', 'request.deleted']);
  const audit = await api.call('GET', '/v1/audit?action=intake.delete', { key: own.keys.live });
  t.is(audit.body.data[0]?.resource_id, id);
});

test('isolation: other workspaces and environments get 404; a sandbox key on a live intake 403', async (t) => {
  const { pair, created } = await createE2eIntake('DHKEM-X25519');
  const intake = created.body;
  const { started } = await submitE2e(intake.id, intake.publishable_key.key, 'DHKEM-X25519', b64(pair.publicKey), [
    content(100),
  ]);
  const docId = started.body.document.id;
  const other = await api.workspace('Other intakes');
  const paths = [
    ['GET', `/v1/intakes/${intake.id}`],
    ['PATCH', `/v1/intakes/${intake.id}`],
    ['POST', `/v1/intakes/${intake.id}/close`],
    ['DELETE', `/v1/intakes/${intake.id}`],
    ['GET', `/v1/intakes/${intake.id}/documents`],
    ['GET', `/v1/intakes/${intake.id}/documents/${docId}`],
    ['DELETE', `/v1/intakes/${intake.id}/documents/${docId}`],
    ['GET', `/v1/intakes/${intake.id}/publishable-keys`],
    ['POST', `/v1/intakes/${intake.id}/publishable-keys`],
    ['DELETE', `/v1/intakes/${intake.id}/publishable-keys/${intake.publishable_key.id}`],
  ] as const;
  for (const key of [other.keys.live, ws.keys.test]) {
    for (const [method, path] of paths) {
      const body = method === 'PATCH' ? { title: 'hijack' } : method === 'POST' ? {} : undefined;
      const refused = await api.call(method, path, { key, body });
      t.is(refused.status, 404, `${method} ${path}`);
      t.is(refused.body.error.code, 'not_found');
    }
  }
  const sandbox = await api.call('GET', `/v1/intakes/${intake.id}/documents/${docId}`, { key: ws.keys.sandbox });
  t.is(sandbox.status, 403);
  t.is(sandbox.body.error.code, 'forbidden');
  const lists = await api.call('GET', '/v1/intakes?limit=100', { key: other.keys.live });
  t.false(lists.body.data.some((i: { id: string }) => i.id === intake.id));
  const untouched = await api.call('GET', `/v1/intakes/${intake.id}`, { key: ws.keys.live });
  t.is(untouched.body.status, 'open');
  t.not(untouched.body.title, 'hijack');
});
