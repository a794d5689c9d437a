import { randomBytes, randomUUID } from 'node:crypto';
import test from 'ava';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { signToken, type TokenPurpose } from '../lib/crypto/signed-token.ts';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { storedFor } from './helpers/storage.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// Download links and upload URLs carry no API key: their signed token is the
// only authorisation on GET /v1/downloads/{token} and PUT/HEAD/GET
// /v1/uploads/{token}. Every token below is refused with the error envelope,
// serves no byte of any file, and stores nothing.

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Capabilities');
  other = await api.workspace('Someone else');
});
test.after.always(() => api.close());

const HOUR = 3_600_000;
const future = () => new Date(Date.now() + HOUR);
const sign = (
  purpose: TokenPurpose,
  data: Record<string, string>,
  expiresAt = future(),
  key = api.services.keys.links,
) => signToken(key, purpose, data, expiresAt);
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
const [bodyOf, signatureOf] = [
  (token: string) => token.split('.')[0] ?? '',
  (token: string) => token.split('.')[1] ?? '',
];

/** The same token with one bit of one character flipped (the result is still base64url). */
function flip(part: string, index: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const char = part[index] ?? 'A';
  const flipped = alphabet[alphabet.indexOf(char) ^ 1] ?? 'A';
  return part.slice(0, index) + flipped + part.slice(index + 1);
}

/** An active transfer whose files hold `bytes`, and download links for each. */
async function activeWithLinks(key: string, files: Buffer[]) {
  const created = await createTransfer(api, key, {
    files: files.map((bytes, i) => ({ name: `file-${i}.bin`, size: bytes.length })),
  });
  for (const [i, bytes] of files.entries()) await put(created.upload_urls[i]?.url ?? '', bytes);
  await waitForTransfer(api, key, created.transfer.id, (tr) => tr.status === 'active');
  const issued = await links(api, created.transfer.short_code);
  if (issued.status !== 200) throw new Error(`links: ${issued.status} ${issued.text}`);
  const urls = (issued.body.files as Array<{ file_id: string; download_url: string }>).map((f) => f.download_url);
  return { created, urls, fileIds: created.upload_urls.map((u) => u.file_id) };
}

test('download tokens that are forged, altered, spliced, truncated, of another file, transfer or purpose, or expired are refused', async (t) => {
  const [a1, a2, b1] = [
    content(6000, 'FILE-A1-MARKER'),
    content(6000, 'FILE-A2-MARKER'),
    content(6000, 'FILE-B1-MARKER'),
  ];
  const a = await activeWithLinks(ws.keys.live, [a1, a2]);
  const b = await activeWithLinks(other.keys.live, [b1]);
  const [tokenA1 = '', tokenA2 = ''] = a.urls.map(tokenOf);
  const tokenB1 = tokenOf(b.urls[0] ?? '');
  const [idA1 = '', idA2 = ''] = a.fileIds;
  const idB1 = b.fileIds[0] ?? '';
  const transferA = a.created.transfer.id;
  const transferB = b.created.transfer.id;

  // The real links work, so each refusal below is the token's doing.
  for (const [url, bytes] of [
    [a.urls[0], a1],
    [a.urls[1], a2],
    [b.urls[0], b1],
  ] as const) {
    const ok = await fetchBytes(url ?? '');
    t.is(ok.status, 200);
    t.true(ok.bytes.equals(bytes));
  }

  // Validly signed download tokens name a grant, as issued links do (docs/transfers.md, "Download links").
  const grant = randomUUID();
  const otherSecret = deriveKey(randomBytes(32).toString('hex'), 'link-token');
  const cases: Array<[string, string, number, string]> = [
    [
      'signed with another secret',
      sign('download', { f: idA1, t: transferA, g: grant }, future(), otherSecret),
      404,
      'not_found',
    ],
    [
      'signed with the API key hashing key',
      sign('download', { f: idA1, t: transferA, g: grant }, future(), api.services.keys.apiKeyPepper),
      404,
      'not_found',
    ],
    ['payload of file A2 under the signature of A1', `${bodyOf(tokenA2)}.${signatureOf(tokenA1)}`, 404, 'not_found'],
    ['payload of transfer B under the signature of A1', `${bodyOf(tokenB1)}.${signatureOf(tokenA1)}`, 404, 'not_found'],
    [
      'payload re-encoded to name file A2',
      `${Buffer.from(Buffer.from(bodyOf(tokenA1), 'base64url').toString().replace(idA1, idA2)).toString('base64url')}.${signatureOf(tokenA1)}`,
      404,
      'not_found',
    ],
    ['a bit flipped in the payload', `${flip(bodyOf(tokenA1), 5)}.${signatureOf(tokenA1)}`, 404, 'not_found'],
    ['a bit flipped in the signature', `${bodyOf(tokenA1)}.${flip(signatureOf(tokenA1), 10)}`, 404, 'not_found'],
    ['the signature truncated', tokenA1.slice(0, -4), 404, 'not_found'],
    ['the signature missing', `${bodyOf(tokenA1)}.`, 400, 'validation_error'],
    ['only the payload', bodyOf(tokenA1), 400, 'validation_error'],
    ['a third part appended', `${tokenA1}.${signatureOf(tokenA1)}`, 400, 'validation_error'],
    [
      'validly signed, file B1 with transfer A',
      sign('download', { f: idB1, t: transferA, g: grant }),
      404,
      'not_found',
    ],
    [
      'validly signed, file A1 with transfer B',
      sign('download', { f: idA1, t: transferB, g: grant }),
      404,
      'not_found',
    ],
    ['validly signed, no transfer', sign('download', { f: idA1, g: grant }), 404, 'not_found'],
    [
      'validly signed, ids that are not uuids',
      sign('download', { f: 'file', t: 'transfer', g: grant }),
      404,
      'not_found',
    ],
    // A link carries the grant of the download-links call that issued it; without one it is an old link.
    ['validly signed, without a grant', sign('download', { f: idA1, t: transferA }), 403, 'forbidden'],
    ['an upload token for file A1', sign('upload', { f: idA1, t: transferA }), 404, 'not_found'],
    [
      'expired a second ago',
      sign('download', { f: idA1, t: transferA, g: grant }, new Date(Date.now() - 1000)),
      403,
      'forbidden',
    ],
  ];
  const served = [a1, a2, b1].map((bytes) => bytes.subarray(2000, 2064));
  for (const [label, token, status, code] of cases) {
    const response = await fetchBytes(`${api.url}/v1/downloads/${token}`);
    t.is(response.status, status, label);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/, label);
    const body = JSON.parse(response.bytes.toString('utf8'));
    t.is(body.error.code, code, label);
    t.is(body.error.request_id, response.headers.get('x-request-id'), label);
    t.true(response.bytes.length < 1000, `${label}: nothing served`);
    for (const run of served) t.false(response.bytes.includes(run), `${label}: no file content`);
    if (label.startsWith('expired')) t.is(body.error.reason, 'link_expired');
  }
});

test('upload tokens that are forged, altered, spliced, truncated, of another file, transfer or purpose, or expired are refused on PUT, HEAD and GET, and store nothing', async (t) => {
  const bytes = content(5000);
  const c = await createTransfer(api, ws.keys.live, {
    files: [
      { name: 'c1.bin', size: bytes.length },
      { name: 'c2.bin', size: bytes.length },
    ],
  });
  const d = await createTransfer(api, other.keys.live, { files: [{ name: 'd1.bin', size: bytes.length }] });
  const [tokenC1 = '', tokenC2 = ''] = c.upload_urls.map((u) => tokenOf(u.url));
  const tokenD1 = tokenOf(d.upload_urls[0]?.url ?? '');
  const [idC1 = '', idC2 = ''] = c.upload_urls.map((u) => u.file_id);
  const idD1 = d.upload_urls[0]?.file_id ?? '';
  const transferC = c.transfer.id;
  const transferD = d.transfer.id;

  const otherSecret = deriveKey(randomBytes(32).toString('hex'), 'link-token');
  const cases: Array<[string, string, number, string]> = [
    ['signed with another secret', sign('upload', { f: idC1, t: transferC }, future(), otherSecret), 404, 'not_found'],
    ['payload of file C2 under the signature of C1', `${bodyOf(tokenC2)}.${signatureOf(tokenC1)}`, 404, 'not_found'],
    ['payload of transfer D under the signature of C1', `${bodyOf(tokenD1)}.${signatureOf(tokenC1)}`, 404, 'not_found'],
    [
      'payload re-encoded to name file C2',
      `${Buffer.from(Buffer.from(bodyOf(tokenC1), 'base64url').toString().replace(idC1, idC2)).toString('base64url')}.${signatureOf(tokenC1)}`,
      404,
      'not_found',
    ],
    ['a bit flipped in the payload', `${flip(bodyOf(tokenC1), 7)}.${signatureOf(tokenC1)}`, 404, 'not_found'],
    ['a bit flipped in the signature', `${bodyOf(tokenC1)}.${flip(signatureOf(tokenC1), 3)}`, 404, 'not_found'],
    ['the signature truncated', tokenC1.slice(0, -2), 404, 'not_found'],
    ['only the payload', bodyOf(tokenC1), 400, 'validation_error'],
    ['validly signed, file D1 with transfer C', sign('upload', { f: idD1, t: transferC }), 404, 'not_found'],
    ['validly signed, file C1 with transfer D', sign('upload', { f: idC1, t: transferD }), 404, 'not_found'],
    ['validly signed, no transfer', sign('upload', { f: idC1 }), 404, 'not_found'],
    ['validly signed, ids that are not uuids', sign('upload', { f: 'file', t: 'transfer' }), 404, 'not_found'],
    ['a download token for file C1', sign('download', { f: idC1, t: transferC }), 404, 'not_found'],
    ['expired a second ago', sign('upload', { f: idC1, t: transferC }, new Date(Date.now() - 1000)), 410, 'not_found'],
  ];
  for (const [label, token, status, code] of cases) {
    const url = `${api.url}/v1/uploads/${token}`;
    const putResponse = await put(url, bytes);
    t.is(putResponse.status, status, `PUT ${label}`);
    t.is(putResponse.body?.error?.code, code, `PUT ${label}`);
    t.is(putResponse.body?.error?.request_id, putResponse.headers.get('x-request-id'), `PUT ${label}`);
    const head = await fetch(url, { method: 'HEAD' });
    t.is(head.status, status, `HEAD ${label}`);
    t.is(head.headers.get('upload-offset'), null, `HEAD ${label}: no offset disclosed`);
    const get = await fetch(url);
    t.is(get.status, status, `GET ${label}`);
    t.is(((await get.json()) as { error: { code: string } }).error.code, code, `GET ${label}`);
  }

  // Nothing was stored for either transfer, and their files are untouched.
  for (const [id, key] of [
    [transferC, ws.keys.live],
    [transferD, other.keys.live],
  ] as const) {
    t.deepEqual(await storedFor(api, id), { objects: [], uploads: [] }, `nothing in storage for ${id}`);
    const files = await createTransferQueries(api.services.db).files(id);
    t.deepEqual(
      files.map((f) => [f.upload_state, f.bytes_received, f.multipart_upload_id]),
      files.map(() => ['pending', 0, null]),
    );
    t.is((await api.call('GET', `/v1/transfers/${id}`, { key })).body.status_reason, 'uploading');
  }

  // The genuine URL still works: the refusals were the tokens' doing.
  const genuine = await put(c.upload_urls[0]?.url ?? '', bytes);
  t.is(genuine.status, 200);
  t.is(genuine.body.upload_state, 'uploaded');
});
