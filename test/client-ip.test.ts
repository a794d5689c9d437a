import type { Request } from '@hapi/hapi';
import test from 'ava';
import { servedOverTls } from '../api/client-ip.ts';
import { loadConfig } from '../lib/config.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// Which address Valise believes is the caller's: the socket peer, or, behind
// trusted proxies only, the address the nearest trusted proxy saw. Every test
// connects from 127.0.0.1; X-Forwarded-For values are only strings here.

let direct: TestApi;
let behindOne: TestApi;
let behindList: TestApi;
let wrongList: TestApi;
test.before(async () => {
  [direct, behindOne, behindList, wrongList] = await Promise.all([
    startApi(),
    startApi({ TRUST_PROXY_HOPS: '1' }),
    startApi({ TRUSTED_PROXIES: '127.0.0.1/32, 10.0.0.0/8' }),
    startApi({ TRUSTED_PROXIES: '10.0.0.0/8' }),
  ]);
});
test.after.always(() => Promise.all([direct, behindOne, behindList, wrongList].map((api) => api?.close())));

async function createKey(api: TestApi, ws: TestWorkspace, body: Record<string, unknown>) {
  const response = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { mfa_code: ws.mfa(), ...body } });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${response.text}`);
  return response.body as { id: string; key: string };
}

/** The address the audit log records for one mutating request sent with these headers. */
async function auditedIp(api: TestApi, ws: TestWorkspace, headers: Record<string, string>) {
  // A refused creation (no name) is audited like any mutating request, and creates nothing.
  const response = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: {}, headers });
  if (response.status !== 400) throw new Error(`expected 400, got ${response.status} ${response.text}`);
  const requestId = response.headers.get('x-request-id');
  const entries = await api.call('GET', '/v1/audit?limit=50', { key: ws.keys.live });
  const entry = entries.body.data.find((e: { request_id: string }) => e.request_id === requestId);
  if (!entry) throw new Error(`no audit entry for ${requestId}`);
  return entry.ip_address as string;
}

test('without trusted proxies, a forged X-Forwarded-For is ignored: the socket address is audited', async (t) => {
  const ws = await direct.workspace('Direct');
  t.is(await auditedIp(direct, ws, { 'x-forwarded-for': '198.51.100.7' }), '127.0.0.1');
  t.is(await auditedIp(direct, ws, { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' }), '127.0.0.1');
});

test('without trusted proxies, a key allowed only for 198.51.100.7 cannot be reached by forging that address', async (t) => {
  const ws = await direct.workspace('Direct allow-list');
  const key = await createKey(direct, ws, { name: 'office', allowed_ips: ['198.51.100.7'] });
  for (const forged of ['198.51.100.7', '198.51.100.7, 198.51.100.7']) {
    const response = await direct.call('GET', '/v1/me', { key: key.key, headers: { 'x-forwarded-for': forged } });
    t.is(response.status, 403, forged);
    t.is(response.body.error.code, 'ip_not_allowed');
  }
});

test('TRUST_PROXY_HOPS=1: the address the proxy appended is used, entries the client wrote to its left are not', async (t) => {
  const ws = await behindOne.workspace('One proxy');
  t.is(await auditedIp(behindOne, ws, { 'x-forwarded-for': '203.0.113.9' }), '203.0.113.9');
  t.is(await auditedIp(behindOne, ws, { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' }), '203.0.113.9');
  t.is(await auditedIp(behindOne, ws, { 'x-forwarded-for': '198.51.100.7 , 10.9.8.7,203.0.113.9' }), '203.0.113.9');
  // No header: the proxy itself is the caller.
  t.is(await auditedIp(behindOne, ws, {}), '127.0.0.1');
});

test('TRUST_PROXY_HOPS=1: a key allowed only for 198.51.100.7 is refused when the proxy saw another address', async (t) => {
  const ws = await behindOne.workspace('One proxy allow-list');
  const key = await createKey(behindOne, ws, { name: 'office', allowed_ips: ['198.51.100.7'] });
  const forged = await behindOne.call('GET', '/v1/me', {
    key: key.key,
    headers: { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' },
  });
  t.is(forged.status, 403);
  t.is(forged.body.error.code, 'ip_not_allowed');
  const genuine = await behindOne.call('GET', '/v1/me', {
    key: key.key,
    headers: { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' },
  });
  t.is(genuine.status, 200, genuine.text);
});

test('TRUSTED_PROXIES: the chain is walked from the right through trusted addresses only', async (t) => {
  const ws = await behindList.workspace('Proxy list');
  // 10.1.2.3 is a trusted proxy, 203.0.113.9 is not: it is the client; what it claimed to its left is ignored.
  t.is(await auditedIp(behindList, ws, { 'x-forwarded-for': '198.51.100.7, 203.0.113.9, 10.1.2.3' }), '203.0.113.9');
  t.is(await auditedIp(behindList, ws, { 'x-forwarded-for': '203.0.113.9' }), '203.0.113.9');
  // Everything trusted down to the leftmost entry: that entry is the client.
  t.is(await auditedIp(behindList, ws, { 'x-forwarded-for': '10.5.5.5, 10.1.2.3' }), '10.5.5.5');
  // An entry that is not an address stops the walk at the last trusted hop.
  t.is(await auditedIp(behindList, ws, { 'x-forwarded-for': 'unknown, 10.1.2.3' }), '10.1.2.3');
});

test('TRUSTED_PROXIES: a socket peer outside the list makes X-Forwarded-For count for nothing', async (t) => {
  const ws = await wrongList.workspace('Untrusted peer');
  t.is(await auditedIp(wrongList, ws, { 'x-forwarded-for': '203.0.113.9, 10.1.2.3' }), '127.0.0.1');
});

test('TRUST_PROXY=true (first entry believed) is refused at start-up, naming its replacements', (t) => {
  const error = t.throws(() => loadConfig({ ...process.env, TRUST_PROXY: 'true' }));
  t.regex(error?.message ?? '', /TRUST_PROXY.*TRUST_PROXY_HOPS.*TRUSTED_PROXIES/s);
  t.notThrows(() => loadConfig({ ...process.env, TRUST_PROXY: 'false' }));
  t.throws(() => loadConfig({ ...process.env, TRUSTED_PROXIES: '10.0.0.0/33' }), { message: /TRUSTED_PROXIES/ });
  t.throws(() => loadConfig({ ...process.env, TRUSTED_PROXIES: 'proxy.internal' }), { message: /TRUSTED_PROXIES/ });
});

const HSTS = /^max-age=(\d+); includeSubDomains$/;

test('HSTS: sent when a trusted proxy says the client used https, with max-age of a year or more', async (t) => {
  const response = await behindOne.call('GET', '/v1/welcome', { headers: { 'x-forwarded-proto': 'https' } });
  const value = response.headers.get('strict-transport-security') ?? '';
  t.regex(value, HSTS);
  t.true(Number(HSTS.exec(value)?.[1]) >= 31_536_000);
  const error = await behindOne.call('GET', '/v1/me', { headers: { 'x-forwarded-proto': 'https' } });
  t.is(error.status, 401);
  t.regex(error.headers.get('strict-transport-security') ?? '', HSTS);
});

test('HSTS: never over plain HTTP, whatever an untrusted client claims', async (t) => {
  for (const api of [direct, wrongList]) {
    const claimed = await api.call('GET', '/v1/welcome', { headers: { 'x-forwarded-proto': 'https' } });
    t.is(claimed.status, 200);
    t.is(claimed.headers.get('strict-transport-security'), null);
  }
  const plain = await behindOne.call('GET', '/v1/welcome');
  t.is(plain.headers.get('strict-transport-security'), null);
  const proxiedHttp = await behindOne.call('GET', '/v1/welcome', { headers: { 'x-forwarded-proto': 'http' } });
  t.is(proxiedHttp.headers.get('strict-transport-security'), null);
  // The value the nearest proxy appended wins over one the client put first.
  const appended = await behindOne.call('GET', '/v1/welcome', { headers: { 'x-forwarded-proto': 'https, http' } });
  t.is(appended.headers.get('strict-transport-security'), null);
});

test('HSTS: a connection that is itself TLS counts as TLS, with or without proxies configured', (t) => {
  // startApi serves plain HTTP only, so this one case is checked on the function respond.ts calls.
  const request = (encrypted: boolean) =>
    ({
      raw: { req: { socket: { encrypted } } },
      info: { remoteAddress: '198.51.100.1' },
      headers: { 'x-forwarded-proto': 'http' },
    }) as unknown as Request;
  for (const env of [{}, { TRUST_PROXY_HOPS: '1' }]) {
    const config = loadConfig({ ...process.env, ...env });
    t.true(servedOverTls(request(true), config));
    t.false(servedOverTls(request(false), config));
  }
});
