import test from 'ava';
import { countryOf } from '../lib/net/country.ts';
import { startApi, type TestApi } from './helpers/api.ts';

// The country of the client address in the audit log (docs/audit.md, "Country"): looked up offline,
// null for addresses that are not public.

let api: TestApi;
test.before(async () => {
  api = await startApi({ TRUST_PROXY_HOPS: '1' });
});
test.after.always(() => api.close());

/** The entry a refused key creation (no name) from this forwarded address leaves. */
async function auditedFrom(key: string, forwardedFor: string | undefined) {
  const response = await api.call('POST', '/v1/api-keys', {
    key,
    body: {},
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });
  const requestId = response.headers.get('x-request-id');
  const log = await api.call('GET', '/v1/audit?limit=50', { key });
  return log.body.data.find((e: { request_id: string }) => e.request_id === requestId);
}

test('a request from a public address is audited with its country; loopback and private ones with none', async (t) => {
  const ws = await api.workspace('Countries');
  t.like(await auditedFrom(ws.keys.live, '8.8.8.8'), { ip_address: '8.8.8.8', country_code: 'US' });
  t.like(await auditedFrom(ws.keys.live, '81.2.69.142'), { ip_address: '81.2.69.142', country_code: 'GB' });
  t.like(await auditedFrom(ws.keys.live, undefined), { ip_address: '127.0.0.1', country_code: null });
  t.like(await auditedFrom(ws.keys.live, '10.1.2.3'), { ip_address: '10.1.2.3', country_code: null });
});

test('countryOf: public IPv4 and IPv6, mapped IPv4; null for the rest', (t) => {
  t.is(countryOf('8.8.8.8'), 'US');
  t.is(countryOf('::ffff:8.8.8.8'), 'US');
  t.regex(countryOf('2001:4860:4860::8888') ?? '', /^[A-Z]{2}$/);
  for (const address of ['127.0.0.1', '::1', '10.0.0.1', '192.168.1.1', '169.254.1.1', 'fe80::1', '0.0.0.0']) {
    t.is(countryOf(address), null, address);
  }
  t.is(countryOf('198.51.100.7'), null, 'documentation range');
  t.is(countryOf('not an address'), null);
  t.is(countryOf(null), null);
});
