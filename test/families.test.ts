import test from 'ava';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { FAMILIES, STORED_FILES } from '../lib/families.ts';
import type { FamilyTable } from '../lib/family.ts';
import { ENVIRONMENTS } from '../lib/vocabulary.ts';
import { startApi } from './helpers/api.ts';

// Every table of the migrated database belongs to exactly one family's declaration
// (lib/families.ts), with the scope and the personal-data columns the database really has: the
// cross-cutting work that iterates the declarations (the sweeper, the sandbox purge, and the
// export and erasure to come) can then not miss a table, because a table nobody declares fails
// here, and a tenant table the purge could not empty fails here too.

/** Tables that hold no data of any tenant. */
const NOT_TENANT_DATA = new Set(['schema_migrations']);

let db: DatabasePool;
test.before(async () => {
  db = await createDatabasePool(loadConfig(process.env).database.url, 2);
});
test.after.always(async () => {
  await db?.end();
});

/** The migrated database's tables, each with its columns. */
async function catalog(): Promise<Map<string, Set<string>>> {
  const rows = await db.any(sql.type(z.object({ table: z.string(), column: z.string() }))`
    SELECT c.relname AS table, a.attname AS column
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`);
  const tables = new Map<string, Set<string>>();
  for (const { table, column } of rows) tables.set(table, (tables.get(table) ?? new Set()).add(column));
  return tables;
}

/** The definitions of a table's CHECK constraints, as PostgreSQL prints them. */
async function checksOf(table: string): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ definition: z.string() }))`
    SELECT pg_get_constraintdef(k.oid) AS definition
    FROM pg_catalog.pg_constraint k
    JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relname = ${table} AND k.contype = 'c'`);
}

const declared: [string, string, FamilyTable][] = FAMILIES.flatMap((family) =>
  Object.entries(family.tables).map(([table, declaration]): [string, string, FamilyTable] => [
    family.name,
    table,
    declaration,
  ]),
);

test('every table is declared by exactly one family, and every declared table exists', async (t) => {
  const tables = await catalog();
  const owners = new Map<string, string[]>();
  for (const [family, table] of declared) owners.set(table, [...(owners.get(table) ?? []), family]);
  const undeclared = [...tables.keys()].filter((table) => !NOT_TENANT_DATA.has(table) && !owners.has(table));
  t.deepEqual(undeclared, [], 'tables no family declares');
  const twice = [...owners].filter(([, families]) => families.length > 1);
  t.deepEqual(twice, [], 'tables declared by several families');
  const missing = [...owners.keys()].filter((table) => !tables.has(table));
  t.deepEqual(missing, [], 'declared tables the database lacks');
  const withWorkspace = [...tables].filter(([, columns]) => columns.has('workspace_id')).length;
  t.log(
    `${tables.size - NOT_TENANT_DATA.size} tables declared by ${FAMILIES.length} families, ${withWorkspace} of them with workspace_id`,
  );
});

test("each table's scope is the one its columns carry, and its parent is declared", async (t) => {
  const tables = await catalog();
  for (const [family, table, { scope }] of declared) {
    const columns = tables.get(table) ?? new Set();
    const where = `${family}: ${table}`;
    if (scope.kind === 'tenant') {
      t.true(columns.has('workspace_id') && columns.has('environment'), `${where} has workspace_id and environment`);
      if (scope.environments) {
        // Declared to hold some environments only: a CHECK names exactly those.
        const checks = (await checksOf(table)).filter((check) => check.includes('environment'));
        const named = ENVIRONMENTS.filter((environment) => checks.some((check) => check.includes(`'${environment}'`)));
        t.deepEqual(named, [...scope.environments], `${where}: a CHECK keeps its rows in ${scope.environments}`);
      }
    } else if (scope.kind === 'workspace') {
      t.true(columns.has('workspace_id') && !columns.has('environment'), `${where} has workspace_id alone`);
    } else if (scope.kind === 'child') {
      t.false(columns.has('workspace_id'), `${where} carries workspace_id: declare it tenant or workspace`);
      t.true(columns.has(scope.column), `${where} has ${scope.column}`);
      t.true(
        declared.some(([, parent]) => parent === scope.parent),
        `${where}: its parent ${scope.parent} is declared`,
      );
    } else if (scope.kind === 'global') {
      t.false(columns.has('workspace_id'), `${where} carries workspace_id: declare it tenant or workspace`);
    } else {
      t.is(table, 'workspaces', `${where}: only the workspaces table is the root`);
    }
  }
});

test('every declared personal-data column exists', async (t) => {
  const tables = await catalog();
  for (const [family, table, { personal }] of declared) {
    const unknown = personal.filter((column) => !tables.get(table)?.has(column));
    t.deepEqual(unknown, [], `${family}: ${table}'s personal columns`);
  }
});

test('every declared subject and exported column exists, and personal data says whose it is', async (t) => {
  // The GDPR export and erasure (lib/gdpr/) find a person's rows by the subject columns alone: a
  // table with personal data and no way to find its subject would be left out of both, silently.
  const tables = await catalog();
  for (const [family, table, declaration] of declared) {
    const { personal, subjects, unattributed, exported = [] } = declaration;
    const named = [...(subjects?.userIds ?? []), ...(subjects?.emails ?? []), ...exported];
    const unknown = named.filter((column) => !tables.get(table)?.has(column));
    t.deepEqual(unknown, [], `${family}: ${table}'s subject and exported columns`);
    const found = (subjects?.userIds?.length ?? 0) + (subjects?.emails?.length ?? 0);
    if (personal.length > 0) {
      t.true(
        found > 0 || Boolean(unattributed?.trim()),
        `${family}: ${table} has personal columns and declares neither its subjects nor why it has none`,
      );
    }
  }
});

test('subject columns hold what they claim: user ids in uuid columns, addresses in text, text[] or jsonb', async (t) => {
  const types = new Map(
    (
      await db.any(sql.type(z.object({ table: z.string(), column: z.string(), type: z.string() }))`
        SELECT c.relname AS table, a.attname AS column, ty.typname AS type
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`)
    ).map((row) => [`${row.table}.${row.column}`, row.type]),
  );
  for (const [family, table, { subjects }] of declared) {
    for (const column of subjects?.userIds ?? []) {
      t.is(types.get(`${table}.${column}`), 'uuid', `${family}: ${table}.${column} holds user ids`);
    }
    for (const column of subjects?.emails ?? []) {
      t.true(
        ['text', '_text', 'jsonb'].includes(types.get(`${table}.${column}`) ?? ''),
        `${family}: ${table}.${column} holds addresses`,
      );
    }
  }
});

test('columns that hold addresses, e-mail addresses or user agents are declared personal', async (t) => {
  // A new column with one of these names is personal data, whichever family adds it.
  const personalByName = /(^|_)(email|emails|ip_address|user_agent|recipient)$/;
  const tables = await catalog();
  for (const [family, table, { personal }] of declared) {
    const found = [...(tables.get(table) ?? [])].filter((column) => personalByName.test(column));
    const undeclared = found.filter((column) => !personal.includes(column));
    t.deepEqual(undeclared, [], `${family}: ${table}`);
  }
});

/** Foreign keys that delete their rows with the row they reference: `table.column -> parent`. */
async function cascades(): Promise<Set<string>> {
  const rows = await db.any(sql.type(z.object({ edge: z.string() }))`
    SELECT child.relname || '.' || a.attname || ' -> ' || parent.relname AS edge
    FROM pg_catalog.pg_constraint c
    JOIN pg_catalog.pg_class child ON child.oid = c.conrelid
    JOIN pg_catalog.pg_class parent ON parent.oid = c.confrelid
    JOIN pg_catalog.pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
    WHERE c.contype = 'f' AND c.confdeltype = 'c'`);
  return new Set(rows.map((row) => row.edge));
}

test('every table with workspace_id can be purged: by its age, its own purge, or with its parent or workspace', async (t) => {
  // The retention contract (lib/family.ts, FamilyRetention; lib/retention/purge.ts): a tenant
  // table is purged by the age column its rows carry unless its family purges it itself; a child
  // goes with its parent; a workspace's own table with the workspace.
  const tables = await catalog();
  const cascading = await cascades();
  for (const family of FAMILIES) {
    for (const [table, { scope, age }] of Object.entries(family.tables)) {
      const columns = tables.get(table) ?? new Set();
      const where = `${family.name}: ${table}`;
      if (scope.kind === 'tenant' && !family.retention?.purge) {
        t.true(
          age !== null && columns.has(age ?? 'created_at'),
          age === null
            ? `${where} has no age: give ${family.name} a retention.purge`
            : `${where} has no ${age ?? 'created_at'}: name its age column, or give ${family.name} a retention.purge`,
        );
      } else if (scope.kind === 'child' && !family.retention?.purge) {
        t.true(
          cascading.has(`${table}.${scope.column} -> ${scope.parent}`),
          `${where}: ${scope.column} must reference ${scope.parent} ON DELETE CASCADE`,
        );
      } else if (scope.kind === 'workspace') {
        t.true(
          cascading.has(`${table}.workspace_id -> workspaces`),
          `${where}: workspace_id must reference workspaces ON DELETE CASCADE`,
        );
      }
    }
  }
  const withWorkspace = [...tables].filter(([, columns]) => columns.has('workspace_id')).map(([table]) => table);
  const undeclared = withWorkspace.filter((table) => !declared.some(([, name]) => name === table));
  t.deepEqual(undeclared, [], 'tables with workspace_id that no family declares, so no purge reaches');
});

test('columns holding keyring-wrapped values are declared, exist, and sit in tables with an id (the rotation pages by it)', async (t) => {
  // A master-key rotation re-wraps what the declarations name (lib/family.ts, `keyWrapped`): a
  // wrapped column nobody declares would keep its old master key, and the key could never retire.
  const tables = await catalog();
  for (const [family, table, { keyWrapped }] of declared) {
    const columns = tables.get(table) ?? new Set();
    const named = [...columns].filter((column) => column.endsWith('_wrapped'));
    const listed = Object.keys(keyWrapped ?? {});
    t.deepEqual(
      named.filter((column) => !listed.includes(column)),
      [],
      `${family}: ${table} has wrapped columns it does not declare keyWrapped`,
    );
    t.deepEqual(
      listed.filter((column) => !columns.has(column)),
      [],
      `${family}: ${table} declares wrapped columns it lacks`,
    );
    if (listed.length > 0) t.true(columns.has('id'), `${family}: ${table}.id`);
  }
  t.true(
    declared.filter(([, , { keyWrapped }]) => keyWrapped).length >= 4,
    'the stored-file tables and the GDPR exports are declared',
  );
});

test("stored files name their owners' and files' real tables and columns", async (t) => {
  const tables = await catalog();
  for (const files of STORED_FILES) {
    const owner = tables.get(files.ownerTable);
    const stored = tables.get(files.filesTable);
    t.truthy(owner && stored, files.owner);
    for (const column of ['id', 'status', 'objects_deleted_at', ...files.endedAt]) {
      t.true(owner?.has(column), `${files.ownerTable}.${column}`);
    }
    for (const column of [files.ownerColumn, 'object_key', 'multipart_upload_id']) {
      t.true(stored?.has(column), `${files.filesTable}.${column}`);
    }
  }
});

test("every OpenAPI tag has a description: a family's own, or one of the routes no family owns", async (t) => {
  const api = await startApi();
  try {
    const document = await api.call('GET', '/v1/openapi.json');
    const tags: { name: string; description: string }[] = document.body.tags;
    const bare = tags.filter((tag) => tag.description === tag.name).map((tag) => tag.name);
    t.deepEqual(bare, []);
    for (const family of FAMILIES) {
      if (family.openapi)
        t.true(
          tags.some((tag) => tag.name === family.openapi?.tag),
          family.name,
        );
    }
  } finally {
    await api.close();
  }
});
