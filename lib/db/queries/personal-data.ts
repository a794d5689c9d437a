import type { ArraySqlToken, CommonQueryMethods, FragmentSqlToken, IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
import type { FamilyTable } from '../../family.ts';
import { sql } from '../sql.ts';

// The rows of any declared table that are about a person, and their personal columns, for the GDPR
// export and erasure (lib/gdpr/): driven by the families' declarations (lib/family.ts: scope,
// personal, subjects, exported), never by a list of tables of its own. Table and column names come
// from the declarations and the catalog, never from a request.

/** A declared table, by name, with what its family says of it. */
export type DeclaredTable = { family: string; table: string; declaration: FamilyTable };

/** A column's type as the catalog knows it: `text`, `_text` (text[]), `jsonb`, `uuid`… and whether it may be null. */
export type ColumnType = { type: string; nullable: boolean };
export type Catalog = ReadonlyMap<string, ReadonlyMap<string, ColumnType>>;

/** Whose rows: a workspace's (every environment), or one environment of it. */
export type RowScope = { workspaceId: string; environment: string | null };

/** A person: their user id and the e-mail addresses they are known by (lower case). */
export type Person = { userId: string; emails: readonly string[] };

const catalogRow = z.object({ table: z.string(), column: z.string(), type: z.string(), nullable: z.boolean() });

const column = (alias: string, name: string) => sql.identifier([alias, name]);

export function createPersonalDataQueries(db: CommonQueryMethods, tables: readonly DeclaredTable[]) {
  const byName = new Map(tables.map((entry) => [entry.table, entry]));
  const declared = (table: string): DeclaredTable => {
    const entry = byName.get(table);
    if (!entry) throw new Error(`${table} is declared by no family`);
    return entry;
  };

  /** Row `alias` of `table` is within `scope`: through its parents, for a child table. */
  function inScope(table: string, alias: string, scope: RowScope, depth = 0): FragmentSqlToken {
    const { declaration } = declared(table);
    const kind = declaration.scope.kind;
    if (declaration.scope.kind === 'child') {
      const parent = `p${depth}`;
      return sql.fragment`EXISTS (SELECT 1 FROM ${sql.identifier([declaration.scope.parent])} ${sql.identifier([parent])}
        WHERE ${column(parent, 'id')} = ${column(alias, declaration.scope.column)}
          AND ${inScope(declaration.scope.parent, parent, scope, depth + 1)})`;
    }
    if (kind === 'root') return sql.fragment`${column(alias, 'id')} = ${scope.workspaceId}`;
    if (kind === 'global') return sql.fragment`FALSE`;
    const workspace = sql.fragment`${column(alias, 'workspace_id')} = ${scope.workspaceId}`;
    if (kind === 'workspace' || scope.environment === null) return workspace;
    return sql.fragment`${workspace} AND ${column(alias, 'environment')}::text = ${scope.environment}`;
  }

  /** Row `alias` of `table` names `person` in one of its own subject columns; null when it declares none. */
  function namesOwn(catalog: Catalog, table: string, alias: string, person: Person): FragmentSqlToken | null {
    const { subjects } = declared(table).declaration;
    const emails = sql.array([...person.emails], 'text');
    const conditions = [
      ...(subjects?.userIds ?? []).map((name) => sql.fragment`${column(alias, name)}::text = ${person.userId}`),
      ...(person.emails.length === 0 ? [] : (subjects?.emails ?? [])).map((name) =>
        matchesAddress(catalog, table, alias, name, emails),
      ),
    ];
    return conditions.length === 0 ? null : sql.fragment`(${sql.join(conditions, sql.fragment` OR `)})`;
  }

  /**
   * Row `alias` of `table` is about `person`: it names them itself or, for a child table declaring
   * no subjects of its own and no `unattributed` data, its parent row does (a transfer's files).
   */
  function about(catalog: Catalog, table: string, alias: string, person: Person, depth = 0): FragmentSqlToken | null {
    const own = namesOwn(catalog, table, alias, person);
    const { declaration } = declared(table);
    if (own || declaration.subjects || declaration.unattributed || declaration.scope.kind !== 'child') return own;
    const parent = `s${depth}`;
    const parentAbout = about(catalog, declaration.scope.parent, parent, person, depth + 1);
    if (!parentAbout) return null;
    return sql.fragment`EXISTS (SELECT 1 FROM ${sql.identifier([declaration.scope.parent])} ${sql.identifier([parent])}
      WHERE ${column(parent, 'id')} = ${column(alias, declaration.scope.column)} AND ${parentAbout})`;
  }

  return {
    /** Every column of every table, with its type. */
    async catalog(): Promise<Catalog> {
      const rows = await db.any(sql.type(catalogRow)`
        SELECT c.relname AS table, a.attname AS column, t.typname AS type, NOT a.attnotnull AS nullable
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`);
      const catalog = new Map<string, Map<string, ColumnType>>();
      for (const row of rows) {
        const columns = catalog.get(row.table) ?? new Map<string, ColumnType>();
        columns.set(row.column, { type: row.type, nullable: row.nullable });
        catalog.set(row.table, columns);
      }
      return catalog;
    },

    /**
     * The rows of `table` within `scope` (about `person` when given), each as a JSON object of its
     * id, its personal and exported columns and its creation time.
     */
    async collect(
      catalog: Catalog,
      table: string,
      scope: RowScope,
      person: Person | null,
      limit: number,
    ): Promise<readonly Record<string, unknown>[]> {
      const { declaration } = declared(table);
      const present = catalog.get(table) ?? new Map<string, ColumnType>();
      const names = [
        ...new Set(
          [
            'id',
            ...(declaration.scope.kind === 'child' ? [declaration.scope.column] : []),
            ...declaration.personal,
            ...(declaration.exported ?? []),
            'created_at',
          ].filter((name) => present.has(name)),
        ),
      ];
      if (names.length === 0) return [];
      const condition = person ? about(catalog, table, 't', person) : sql.fragment`TRUE`;
      if (!condition) return [];
      const object = sql.join(
        names.map((name) => sql.fragment`${name}::text, ${column('t', name)}`),
        sql.fragment`, `,
      );
      const order = present.has('created_at') ? sql.fragment`ORDER BY ${column('t', 'created_at')}` : sql.fragment``;
      return db.anyFirst(sql.type(z.object({ row: z.record(z.string(), z.unknown()) }))`
        SELECT jsonb_build_object(${object}) AS row FROM ${sql.identifier([table])} t
        WHERE ${inScope(table, 't', scope)} AND ${condition} ${order} LIMIT ${limit}`);
    },

    /**
     * The values of `table`'s personal text columns in the rows about `person` (their names, the
     * network addresses they used…): what an erasure also looks for inside JSON documents.
     */
    async identifyingValues(catalog: Catalog, table: string, scope: RowScope, person: Person): Promise<string[]> {
      const { declaration } = declared(table);
      const condition = namesOwn(catalog, table, 't', person);
      const texts = declaration.personal.filter((name) => catalog.get(table)?.get(name)?.type === 'text');
      if (!condition || texts.length === 0) return [];
      const values = sql.join(
        texts.map((name) => column('t', name)),
        sql.fragment`, `,
      );
      return [
        ...(await db.anyFirst(sql.type(z.object({ value: z.string() }))`
          SELECT DISTINCT v.value FROM ${sql.identifier([table])} t, LATERAL unnest(ARRAY[${values}]) AS v(value)
          WHERE ${inScope(table, 't', scope)} AND ${condition} AND v.value IS NOT NULL AND length(v.value) >= 3`)),
      ];
    },

    /**
     * Pseudonymises the personal columns of `table`'s rows about `person`: a column that may be
     * null becomes null, an address column that may not becomes `pseudonym`, other text `[erased]`;
     * the person's addresses leave text arrays; JSON documents keep their shape, every string equal
     * to one of `values` replaced. The count of rows changed.
     */
    async erase(
      catalog: Catalog,
      table: string,
      scope: RowScope,
      person: Person,
      values: readonly string[],
      pseudonym: string,
    ): Promise<number> {
      const { declaration } = declared(table);
      const condition = namesOwn(catalog, table, 't', person);
      if (!condition || declaration.personal.length === 0) return 0;
      const addressColumns = new Set(declaration.subjects?.emails ?? []);
      const erased = declaration.personal.map((name) => {
        const { type, nullable } = catalog.get(table)?.get(name) ?? { type: 'text', nullable: true };
        const current = column('t', name);
        const value =
          type === 'jsonb'
            ? replaceStrings(current, values, pseudonym)
            : type === '_text'
              ? sql.fragment`ARRAY(SELECT v FROM unnest(${current}) v
                  WHERE lower(v) <> ALL(${sql.array([...person.emails], 'text')}))`
              : nullable
                ? sql.fragment`NULL`
                : sql.fragment`${addressColumns.has(name) ? pseudonym : '[erased]'}::text`;
        return { name, current, value };
      });
      // Only rows with something left to erase: erasing again changes (and counts) nothing.
      const changed = await db.anyFirst(sql.type(z.object({ changed: z.boolean() }))`
        UPDATE ${sql.identifier([table])} t
        SET ${sql.join(
          erased.map(({ name, value }) => sql.fragment`${sql.identifier([name])} = ${value}`),
          sql.fragment`, `,
        )}
        WHERE ${inScope(table, 't', scope)} AND ${condition}
          AND (${sql.join(
            erased.map(({ current, value }) => sql.fragment`${current} IS DISTINCT FROM ${value}`),
            sql.fragment` OR `,
          )})
        RETURNING TRUE AS changed`);
      return changed.length;
    },

    /**
     * Removes the person's addresses from `table`'s personal columns in every row of the scope, not
     * only those about them: an address is theirs wherever it is written (a note naming them).
     */
    async eraseAddressesEverywhere(
      catalog: Catalog,
      table: string,
      scope: RowScope,
      person: Person,
      pseudonym: string,
    ) {
      const { declaration } = declared(table);
      if (person.emails.length === 0) return 0;
      const emails = sql.array([...person.emails], 'text');
      let changed = 0;
      for (const name of declaration.personal) {
        const { type, nullable } = catalog.get(table)?.get(name) ?? { type: 'unknown', nullable: true };
        if (!['text', '_text', 'jsonb'].includes(type)) continue;
        const target = sql.identifier([name]);
        const current = column('t', name);
        const value =
          type === 'jsonb'
            ? replaceStrings(current, person.emails, pseudonym)
            : type === '_text'
              ? sql.fragment`ARRAY(SELECT v FROM unnest(${current}) v WHERE lower(v) <> ALL(${emails}))`
              : nullable
                ? sql.fragment`NULL`
                : sql.fragment`${pseudonym}::text`;
        const rows = await db.anyFirst(sql.type(z.object({ changed: z.boolean() }))`
          UPDATE ${sql.identifier([table])} t SET ${target} = ${value}
          WHERE ${inScope(table, 't', scope)} AND ${matchesAddress(catalog, table, 't', name, emails)}
          RETURNING TRUE AS changed`);
        changed += rows.length;
      }
      return changed;
    },
  };
}

/** Column `name` of row `alias` holds one of `emails` (lower case): as its text, an element, or a JSON string. */
function matchesAddress(
  catalog: Catalog,
  table: string,
  alias: string,
  name: string,
  emails: ArraySqlToken,
): FragmentSqlToken {
  const type = catalog.get(table)?.get(name)?.type ?? 'text';
  const value = column(alias, name);
  if (type === '_text') return sql.fragment`EXISTS (SELECT 1 FROM unnest(${value}) v WHERE lower(v) = ANY(${emails}))`;
  if (type === 'jsonb' || type === 'json') {
    return sql.fragment`EXISTS (SELECT 1 FROM jsonb_path_query(${value}::jsonb, 'strict $.**') v
      WHERE jsonb_typeof(v) = 'string' AND lower(v #>> '{}') = ANY(${emails}))`;
  }
  return sql.fragment`lower(${value}::text) = ANY(${emails})`;
}

/**
 * `document` with every string member equal to one of `values` (case aside) replaced by
 * `replacement`, its shape kept: the JSON paths of those strings are rewritten one by one.
 */
function replaceStrings(document: IdentifierSqlToken, values: readonly string[], replacement: string) {
  if (values.length === 0) return sql.fragment`${document}`;
  return sql.fragment`erase_json_strings(${document}, ${sql.array(
    values.map((value) => value.toLowerCase()),
    'text',
  )}, ${replacement})`;
}
