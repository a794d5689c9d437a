import { randomBytes } from 'node:crypto';
import test from 'ava';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { mailsTo, uniqueAddress } from './helpers/mail.ts';
import { intoFreshRateWindow } from './helpers/rate-window.ts';
import { content, put } from './helpers/transfers.ts';

// A public intake's page is anonymous: its submissions must not start workflows, events and
// mails without end (docs/intakes.md, "Budgets"), and its publishable key must not cost a
// database lookup once the address's request budget is spent.

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Intake budgets');
});
test.after.always(() => api.close());

async function createIntake(body: Record<string, unknown>) {
  const created = await api.call('POST', '/v1/intakes', { key: ws.keys.live, body: { title: 'Budgets', ...body } });
  if (created.status !== 201) throw new Error(`intake: ${created.status} ${created.text}`);
  return created.body as { id: string; limits: Record<string, number | null>; publishable_key: { key: string } };
}

const submit = (intakeId: string, cip: string, size = 10) =>
  api.call('POST', `/v1/intakes/${intakeId}/submissions`, {
    key: cip,
    body: { files: [{ name: 'scan.pdf', size }] },
  });

test('an intake takes at most its submissions per hour: then 429 with Retry-After until the hour has room', async (t) => {
  const defaults = await createIntake({});
  t.is(defaults.limits.submissions_per_hour, 100);
  t.is(defaults.limits.submissions_per_day, 1000);

  const intake = await createIntake({ limits: { submissions_per_hour: 2 } });
  t.is(intake.limits.submissions_per_hour, 2);
  const cip = intake.publishable_key.key;
  for (const _ of [1, 2]) t.is((await submit(intake.id, cip)).status, 201);
  const refused = await submit(intake.id, cip);
  t.is(refused.status, 429, refused.text);
  t.is(refused.body.error.code, 'rate_limited');
  t.is(refused.body.error.reason, 'submissions_per_hour');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter > 3500 && retryAfter <= 3600, `Retry-After: ${retryAfter}`);
  const documents = await api.call('GET', `/v1/intakes/${intake.id}/documents`, { key: ws.keys.live });
  t.is(documents.body.data.length, 2, 'the refused submission created nothing');

  // The owner raises the budget; null gives the configured default back.
  const raised = await api.call('PATCH', `/v1/intakes/${intake.id}`, {
    key: ws.keys.live,
    body: { limits: { submissions_per_hour: 3 } },
  });
  t.is(raised.body.limits.submissions_per_hour, 3);
  t.is((await submit(intake.id, cip)).status, 201);
  t.is((await submit(intake.id, cip)).status, 429);
  const reset = await api.call('PATCH', `/v1/intakes/${intake.id}`, {
    key: ws.keys.live,
    body: { limits: { submissions_per_hour: null } },
  });
  t.is(reset.body.limits.submissions_per_hour, 100);
  t.is((await submit(intake.id, cip)).status, 201);

  const day = await createIntake({ limits: { submissions_per_day: 1 } });
  t.is((await submit(day.id, day.publishable_key.key)).status, 201);
  const dayRefused = await submit(day.id, day.publishable_key.key);
  t.is(dayRefused.status, 429);
  t.is(dayRefused.body.error.reason, 'submissions_per_day');

  const invalid = await api.call('PATCH', `/v1/intakes/${intake.id}`, {
    key: ws.keys.live,
    body: { limits: { submissions_per_hour: 0 } },
  });
  t.is(invalid.status, 400);
  t.is(invalid.body.error.param, 'limits.submissions_per_hour');
});

test('an intake mails at most INTAKE_NOTICES_PER_HOUR notices an hour, however many submissions arrive', async (t) => {
  const perHour = api.services.config.intakes.noticesPerHour;
  const notify = uniqueAddress('intake-notices');
  const intake = await createIntake({ notify: [notify] });
  const cip = intake.publishable_key.key;
  const count = perHour + 3;
  for (let i = 0; i < count; i++) {
    const data = content(100);
    const started = await submit(intake.id, cip, data.length);
    t.is(started.status, 201, started.text);
    t.is((await put(started.body.upload_urls[0].url, data)).status, 200);
  }
  await eventually(
    async () => {
      const received = await api.services.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM intake_documents WHERE intake_id = ${intake.id} AND received_at IS NOT NULL`,
      );
      return received === count ? true : undefined;
    },
    120_000,
    500,
  );
  // The last notices have had time to go out (each is sent right after its document is received).
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const mails = await mailsTo(notify);
  t.is(mails.length, perHour, `${mails.length} mails for ${count} submissions`);
});

test('past the address budget, a publishable key is refused with 429 before it is looked up', async (t) => {
  const limited = await startApi({ RATE_LIMIT_PUBLIC: '3' });
  t.teardown(() => limited.close());
  const owner = await limited.workspace('Intake budgets: F16');
  const created = await limited.call('POST', '/v1/intakes', { key: owner.keys.live, body: { title: 'F16' } });
  const intakeId = created.body.id as string;
  const cip = created.body.publishable_key.key as string;
  await intoFreshRateWindow();

  for (const _ of [1, 2, 3])
    t.is((await limited.call('GET', `/v1/intakes/${intakeId}/form`, { key: cip })).status, 200);
  const valid = await limited.call('GET', `/v1/intakes/${intakeId}/form`, { key: cip });
  t.is(valid.status, 429);
  t.is(valid.body.error.code, 'rate_limited');
  t.truthy(valid.headers.get('retry-after'));
  // A key that does not exist is not looked up: 429, where a lookup would have answered 401.
  const unknown = `cip_live_${randomBytes(24).toString('hex').slice(0, 32)}`;
  const guessed = await limited.call('POST', `/v1/intakes/${intakeId}/submissions`, {
    key: unknown,
    body: { files: [{ name: 'a.pdf', size: 1 }] },
  });
  t.is(guessed.status, 429, guessed.text);
  t.is(guessed.body.error.code, 'rate_limited');
});
