import test from 'ava';
import type { RuleRow } from '../lib/db/queries/rules.ts';
import { conditionsHold, factsOf, MAX_RULE_CHAIN, rulesToRun } from '../lib/rules/match.ts';

// Which rules an event runs: conditions, and the loop guard.

const rule = (id: string, trigger_conditions: Record<string, unknown> | null = null) =>
  ({ id, trigger_conditions }) as unknown as RuleRow;

const transferEvent = (transfer: Record<string, unknown>, caused_by_rules: string[] = []) => ({
  type: 'transfer.created',
  data: { transfer },
  caused_by_rules,
});

test('every condition given must hold; facts the event lacks never match', (t) => {
  const facts = factsOf(
    transferEvent({ encryption_mode: 'server', status: 'scanning', recipient: 'Ann@Example.com' }),
    3,
  );
  t.true(conditionsHold(null, facts));
  t.true(conditionsHold({}, facts));
  t.true(conditionsHold({ encryption_mode: 'server', min_files: 3, recipient_email: 'ann@example.COM' }, facts));
  t.false(conditionsHold({ encryption_mode: 'e2e' }, facts));
  t.false(conditionsHold({ min_files: 4 }, facts));
  t.false(conditionsHold({ status: 'active' }, facts));
  t.false(conditionsHold({ country_code: 'FR' }, facts), 'transfers carry no country');
  t.true(
    conditionsHold(
      { country_code: 'fr' },
      factsOf({ type: 'transfer.geo_blocked', data: { country_code: 'FR' }, caused_by_rules: [] }, null),
    ),
  );
  t.false(conditionsHold({ min_files: 1 }, factsOf({ type: 'api_key.created', data: {}, caused_by_rules: [] }, null)));
});

test('the payload file count wins over the looked-up one', (t) => {
  t.is(factsOf(transferEvent({ files_count: 2 }), 7).files_count, 2);
  t.is(factsOf(transferEvent({}), 7).files_count, 7);
});

test('a rule never runs on an event its own action caused, and long chains stop', (t) => {
  const rules = [rule('a'), rule('b')];
  t.deepEqual(
    rulesToRun(rules, transferEvent({}), factsOf(transferEvent({}), null)).map((r) => r.id),
    ['a', 'b'],
  );
  const causedByA = transferEvent({}, ['a']);
  t.deepEqual(
    rulesToRun(rules, causedByA, factsOf(causedByA, null)).map((r) => r.id),
    ['b'],
  );
  const chain = transferEvent(
    {},
    Array.from({ length: MAX_RULE_CHAIN }, (_, i) => `r${i}`),
  );
  t.deepEqual(rulesToRun(rules, chain, factsOf(chain, null)), []);
});
