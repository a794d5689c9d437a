import { randomUUID } from 'node:crypto';
import test from 'ava';
import { z } from 'zod';
import { sql } from '../../lib/db/sql.ts';
import { type ApiResponse, startApi } from '../helpers/api.ts';
import { startPrivatePostgres } from '../helpers/private-services.ts';

// PostgreSQL restarted under load (issue #26). An API on a PostgreSQL of the test's own serves
// lists and creations from several clients at once; the database is stopped by its pid (a fast
// shutdown: sessions end with 57P01, new ones are refused) and started again three seconds later.
// Checked: meanwhile every answer is a success or 503 `service_unavailable` in the spec's envelope
// with Retry-After, never a 500; the API recovers by itself, without a restart; and nothing is lost
// or doubled: every creation answered 201 is there, and each one answered 503 is made exactly once
// when its client retries with the same Idempotency-Key.

const CLIENTS = 4;

test('PostgreSQL restarted under load: 503 with the envelope meanwhile, never 500, and the API recovers by itself', async (t) => {
  const postgres = await startPrivatePostgres();
  t.teardown(() => postgres.remove());
  // No worker: the transfers' workflows wait on a task queue nobody polls; only the API is under test.
  // The budgets are not under test here: high enough that no client is refused by them.
  const api = await startApi({
    DATABASE_URL: postgres.url,
    TEMPORAL_TASK_QUEUE: `fault-${randomUUID()}`,
    RATE_LIMIT_READ: '100000',
    RATE_LIMIT_WRITE: '100000',
  });
  t.teardown(() => api.close());
  const ws = await api.workspace('PostgreSQL restart');
  const key = ws.keys.live;

  type Outcome = { at: number; status: number; body: ApiResponse['body']; retryAfter: string | null };
  const outcomes: Outcome[] = [];
  const created = new Map<string, string>(); // Idempotency-Key -> transfer id
  const refused: string[] = []; // Idempotency-Keys of creations answered 503
  const record = (response: ApiResponse) => {
    outcomes.push({
      at: Date.now(),
      status: response.status,
      body: response.body,
      retryAfter: response.headers.get('retry-after'),
    });
    return response;
  };
  let running = true;
  const client = async (index: number) => {
    while (running) {
      record(await api.call('GET', '/v1/transfers?limit=5', { key }));
      const idempotencyKey = `pg-${index}-${randomUUID()}`;
      const answer = record(
        await api.call('POST', '/v1/transfers', {
          key,
          headers: { 'idempotency-key': idempotencyKey },
          body: { files: [{ name: 'restart.bin', size: 10 }] },
        }),
      );
      if (answer.status === 201) created.set(idempotencyKey, answer.body.transfer.id);
      else if (answer.status === 503) refused.push(idempotencyKey);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, index) => client(index));

  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const stoppedAt = Date.now();
  await postgres.stop();
  t.log(`injected: PostgreSQL stopped (fast shutdown, by pid) under ${CLIENTS} clients, for 3 s`);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await postgres.start();
  const restartedAt = Date.now();
  // Recovered: the clients' answers are successes again, without touching the API.
  const recovered = await (async () => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const recent = outcomes.filter((outcome) => outcome.at > restartedAt);
      if (recent.length >= 2 * CLIENTS && recent.slice(-2 * CLIENTS).every((outcome) => outcome.status < 300)) {
        return recent.find((outcome) => outcome.status < 300)?.at;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return undefined;
  })();
  running = false;
  await Promise.all(clients);

  const statuses = outcomes.reduce<Record<number, number>>((counts, outcome) => {
    counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
    return counts;
  }, {});
  t.log(
    `checked: ${outcomes.length} answers ${JSON.stringify(statuses)}; recovered ${recovered ? recovered - restartedAt : '—'} ms after the restart`,
  );
  t.truthy(recovered, 'the API serves again by itself once PostgreSQL is back');
  t.true(
    outcomes.some((outcome) => outcome.status === 503 && outcome.at >= stoppedAt),
    'the outage was seen',
  );
  const wrong = outcomes.filter((outcome) => outcome.status !== 503 && (outcome.status < 200 || outcome.status >= 300));
  t.deepEqual(
    wrong.map((outcome) => `${outcome.status} ${JSON.stringify(outcome.body).slice(0, 200)}`),
    [],
    'every answer is a success or a 503',
  );
  for (const outcome of outcomes.filter((o) => o.status === 503)) {
    t.like(outcome.body.error, { code: 'service_unavailable', param: null });
    t.regex(outcome.body.error.request_id, /^req_/);
    t.true(String(outcome.body.error.doc_url).endsWith('/errors#service_unavailable'));
    t.is(outcome.retryAfter, '2');
  }

  // Nothing lost: every creation answered 201 is there.
  for (const id of created.values()) {
    const found = await api.call('GET', `/v1/transfers/${id}`, { key });
    t.is(found.status, 200, `transfer ${id} answered 201 is kept`);
  }
  // Nothing doubled: a creation answered 503, retried with its key, is made once (or was made once).
  const count = async () =>
    Number(
      await api.services.db.oneFirst(
        sql.type(
          z.object({ count: z.number() }),
        )`SELECT count(*)::int AS count FROM transfers WHERE workspace_id = ${ws.workspace_id}`,
      ),
    );
  const before = await count();
  for (const idempotencyKey of refused) {
    const retried = await api.call('POST', '/v1/transfers', {
      key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { files: [{ name: 'restart.bin', size: 10 }] },
    });
    t.is(retried.status, 201, retried.text);
    const again = await api.call('POST', '/v1/transfers', {
      key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { files: [{ name: 'restart.bin', size: 10 }] },
    });
    t.is(again.body.transfer.id, retried.body.transfer.id, 'the same key answers the same transfer');
  }
  const after = await count();
  t.true(after - before <= refused.length, `${after - before} transfers for ${refused.length} retried creations`);
});
