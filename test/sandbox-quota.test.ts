import test from 'ava';
import { startApi, type TestApi } from './helpers/api.ts';

// Sandbox keys may create 25 transfers per rolling 24 hours (spec, Limits),
// however many requests race for the last places.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

test('40 parallel sandbox creates: exactly 25 are created, the other 15 get 429 rate_limited', async (t) => {
  const ws = await api.workspace('Sandbox quota race');
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      api.call('POST', '/v1/transfers', {
        key: ws.keys.sandbox,
        body: { files: [{ name: `race-${i}.bin`, size: 1 }] },
      }),
    ),
  );
  const statuses = responses.map((r) => r.status);
  t.is(statuses.filter((s) => s === 201).length, 25, `statuses: ${statuses.join(',')}`);
  const refused = responses.filter((r) => r.status !== 201);
  t.is(refused.length, 15);
  for (const response of refused) {
    t.is(response.status, 429, response.text);
    t.is(response.body.error.code, 'rate_limited');
    t.is(response.headers.get('retry-after'), '3600');
    t.is(response.body.error.request_id, response.headers.get('x-request-id'));
  }
  const listed = await api.call('GET', '/v1/transfers?limit=100', { key: ws.keys.sandbox });
  t.is(listed.body.data.length, 25, 'what exists is what was answered 201');
  t.false(listed.body.has_more);
});
