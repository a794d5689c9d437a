import test from 'ava';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { FAMILIES } from '../lib/families.ts';
import { ENVIRONMENTS } from '../lib/vocabulary.ts';

// The database keeps its own copy of each vocabulary: `CHECK (column IN (...))`
// constraints and enum types, written by the migrations. This test reads them
// back from the migrated database and holds each CHECK against the vocabulary
// its table's declaration names (`vocabulary` in lib/family.ts), so a word added
// on one side only fails here, and so does a new closed set in SQL that no
// declaration backs.

/** `table.column` of every list CHECK → its vocabulary, from the families' declarations. */
const CHECKED_COLUMNS: Record<string, readonly string[]> = Object.fromEntries(
  FAMILIES.flatMap((family) =>
    Object.entries(family.tables).flatMap(([table, declared]) =>
      Object.entries(declared.vocabulary ?? {}).map(([column, words]) => [`${table}.${column}`, words]),
    ),
  ),
);

/** Every enum type → its vocabulary. */
const ENUM_TYPES: Record<string, readonly string[]> = {
  environment: ENVIRONMENTS,
};

let db: DatabasePool;
test.before(async () => {
  db = await createDatabasePool(loadConfig(process.env).database.url, 2);
});
test.after.always(async () => {
  await db?.end();
});

/**
 * PostgreSQL stores `column IN ('a', 'b')` as `CHECK ((column = ANY (ARRAY['a'::text, 'b'::text])))`,
 * whichever way the migration wrote it; a single word would be `column = 'a'::text`.
 */
const LIST_CHECK = /^CHECK \(\(+"?(\w+)"?\)?(?:::text)? = ANY \(\(?ARRAY\[(.*)\]\)?(?:::text\[\])?\)\)+$/;
const WORD = /'((?:[^']|'')*)'::(?:text|character varying)/g;

async function listChecks() {
  const rows = await db.any(sql.type(z.object({ table_name: z.string(), name: z.string(), definition: z.string() }))`
    SELECT c.conrelid::regclass::text AS table_name, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c
    JOIN pg_namespace n ON n.oid = c.connamespace
    WHERE c.contype = 'c' AND n.nspname = current_schema() AND pg_get_constraintdef(c.oid) LIKE '%ANY%'
    ORDER BY 1, 2`);
  return rows.map((row) => {
    const match = LIST_CHECK.exec(row.definition);
    const words = match
      ? [...(match[2] ?? '').matchAll(WORD)].map((word) => (word[1] ?? '').replaceAll("''", "'"))
      : null;
    return { ...row, column: match?.[1] ?? null, words };
  });
}

const sorted = (words: readonly string[]) => [...words].sort();

test('every list CHECK constraint is read as a column and its words', async (t) => {
  const checks = await listChecks();
  t.true(checks.length > 0, 'the migrated database has list CHECK constraints');
  for (const check of checks) {
    t.truthy(
      check.column && check.words?.length,
      `${check.table_name}.${check.name} is not a list: ${check.definition}`,
    );
  }
});

test('every list CHECK constraint has a declared vocabulary, and the same words', async (t) => {
  const seen = new Set<string>();
  for (const check of await listChecks()) {
    const key = `${check.table_name}.${check.column}`;
    seen.add(key);
    const vocabulary = CHECKED_COLUMNS[key];
    if (!vocabulary) {
      t.fail(`${key} (${check.name}) is a closed set of words no table's \`vocabulary\` declares (lib/family.ts)`);
      continue;
    }
    t.deepEqual(sorted(check.words ?? []), sorted(vocabulary), `${key} (${check.name})`);
  }
  for (const key of Object.keys(CHECKED_COLUMNS)) t.true(seen.has(key), `${key} has no list CHECK any more`);
});

test('every enum type has a vocabulary, and the same words', async (t) => {
  const types = await db.any(sql.type(z.object({ name: z.string(), labels: z.array(z.string()) }))`
    SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS labels
    FROM pg_type t
    JOIN pg_enum e ON e.enumtypid = t.oid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = current_schema()
    GROUP BY t.typname
    ORDER BY 1`);
  t.deepEqual(
    types.map((type) => type.name),
    Object.keys(ENUM_TYPES).sort(),
  );
  for (const type of types) t.deepEqual(sorted(type.labels), sorted(ENUM_TYPES[type.name] ?? []), type.name);
});
