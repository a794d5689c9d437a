import { type Filter, parse } from 'scim2-parse-filter';
import type { FragmentSqlToken } from 'slonik';
import { DomainError } from '../../errors.ts';
import { sql } from '../sql.ts';

// SCIM filters (RFC 7644 §3.4.2.2) as SQL: the parsed expression is walked and every attribute
// looked up in an allow-list of columns; values are always bound parameters. An attribute not in
// the list, or an operator that makes no sense for it, is 400 `invalidFilter`.

type Kind =
  /** Compared without regard to case (caseExact false). */
  | 'text'
  /** Compared as sent (caseExact true: ids, externalId). */
  | 'exact'
  | 'boolean'
  | 'datetime';

type Column = { kind: Kind; sql: FragmentSqlToken };
/** A multi-valued attribute: rows of a set, filtered with a sub-filter over their own attributes. */
type MultiValued = {
  /** The FROM clause of its elements, and how they are tied to the row filtered. */
  elements: FragmentSqlToken;
  correlation: FragmentSqlToken;
  attributes: Record<string, Column>;
  defaultAttribute: string;
};

export type FilterTarget = {
  columns: Record<string, Column>;
  multiValued: Record<string, MultiValued>;
  /** Schema URNs whose `urn:…:attribute` prefix may name an attribute. */
  schemas: readonly string[];
};

const text = (fragment: FragmentSqlToken): Column => ({ kind: 'text', sql: fragment });
const exact = (fragment: FragmentSqlToken): Column => ({ kind: 'exact', sql: fragment });

export const USER_FILTER: FilterTarget = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:user', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:user'],
  columns: {
    id: exact(sql.fragment`u.id::text`),
    username: text(sql.fragment`coalesce(u.user_name, u.email)`),
    externalid: exact(sql.fragment`u.external_id`),
    active: { kind: 'boolean', sql: sql.fragment`u.active` },
    displayname: text(sql.fragment`u.display_name`),
    'name.givenname': text(sql.fragment`u.given_name`),
    'name.familyname': text(sql.fragment`u.family_name`),
    'name.middlename': text(sql.fragment`u.middle_name`),
    'name.formatted': text(sql.fragment`u.formatted_name`),
    title: text(sql.fragment`u.title`),
    preferredlanguage: text(sql.fragment`u.preferred_language`),
    employeenumber: exact(sql.fragment`u.employee_number`),
    costcenter: text(sql.fragment`u.cost_center`),
    organization: text(sql.fragment`u.organization`),
    division: text(sql.fragment`u.division`),
    department: text(sql.fragment`u.department`),
    manager: exact(sql.fragment`u.manager_id`),
    'manager.value': exact(sql.fragment`u.manager_id`),
    'meta.created': { kind: 'datetime', sql: sql.fragment`u.created_at` },
    'meta.lastmodified': { kind: 'datetime', sql: sql.fragment`u.updated_at` },
  },
  multiValued: {
    emails: {
      // Members made outside SCIM have their one address.
      elements: sql.fragment`jsonb_array_elements(CASE WHEN jsonb_array_length(u.emails) = 0
        THEN jsonb_build_array(jsonb_build_object('value', u.email, 'primary', true)) ELSE u.emails END) AS e`,
      correlation: sql.fragment`TRUE`,
      attributes: {
        value: text(sql.fragment`e ->> 'value'`),
        type: text(sql.fragment`e ->> 'type'`),
        primary: { kind: 'boolean', sql: sql.fragment`coalesce((e ->> 'primary')::boolean, false)` },
      },
      defaultAttribute: 'value',
    },
  },
};

export const GROUP_FILTER: FilterTarget = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:group'],
  columns: {
    id: exact(sql.fragment`g.id::text`),
    displayname: text(sql.fragment`g.display_name`),
    externalid: exact(sql.fragment`g.external_id`),
    'meta.created': { kind: 'datetime', sql: sql.fragment`g.created_at` },
    'meta.lastmodified': { kind: 'datetime', sql: sql.fragment`g.updated_at` },
  },
  multiValued: {
    members: {
      elements: sql.fragment`scim_group_members m`,
      correlation: sql.fragment`m.group_id = g.id`,
      attributes: { value: exact(sql.fragment`m.user_id::text`) },
      defaultAttribute: 'value',
    },
  },
};

/** Filters longer than this are refused before parsing: no identity provider sends one. */
const MAX_FILTER_LENGTH = 2_000;
const MAX_DEPTH = 20;

export const invalidFilter = (detail: string) =>
  new DomainError('validation_error', detail, { param: 'filter', details: { scimType: 'invalidFilter' } });

/** The SQL condition of a SCIM filter on `target`'s rows; `TRUE` without a filter. */
export function filterToSql(target: FilterTarget, filter: string | undefined): FragmentSqlToken {
  if (filter === undefined || filter.trim() === '') return sql.fragment`TRUE`;
  if (filter.length > MAX_FILTER_LENGTH) throw invalidFilter('The filter is too long.');
  let parsed: Filter;
  try {
    parsed = parse(filter);
  } catch {
    throw invalidFilter('The filter is not a valid SCIM filter expression.');
  }
  return translate(target, parsed, 0);
}

function translate(target: FilterTarget, filter: Filter, depth: number): FragmentSqlToken {
  if (depth > MAX_DEPTH) throw invalidFilter('The filter nests too deeply.');
  switch (filter.op) {
    case 'and':
    case 'or': {
      const parts = filter.filters.map((part) => sql.fragment`(${translate(target, part, depth + 1)})`);
      return sql.fragment`${sql.join(parts, filter.op === 'and' ? sql.fragment` AND ` : sql.fragment` OR `)}`;
    }
    case 'not':
      return sql.fragment`NOT coalesce((${translate(target, filter.filter, depth + 1)}), false)`;
    case '[]': {
      const multi = multiValuedOf(target, filter.attrPath);
      const inner: FilterTarget = { columns: multi.attributes, multiValued: {}, schemas: [] };
      return exists(multi, translate(inner, filter.valFilter, depth + 1));
    }
    default: {
      const path = normalise(target, filter.attrPath);
      const column = target.columns[path];
      if (column) return compare(column, filter.op, filter.op === 'pr' ? undefined : filter.compValue, path);
      // `emails.value eq "x"`, or `emails eq "x"` (its default sub-attribute).
      const [head = '', sub] = path.split('.', 2);
      const multi = target.multiValued[head];
      const element = multi?.attributes[sub ?? multi.defaultAttribute];
      if (!multi || !element) throw invalidFilter(`Filtering on \`${filter.attrPath}\` is not supported.`);
      return exists(multi, compare(element, filter.op, filter.op === 'pr' ? undefined : filter.compValue, path));
    }
  }
}

function exists(multi: MultiValued, condition: FragmentSqlToken): FragmentSqlToken {
  return sql.fragment`EXISTS (SELECT 1 FROM ${multi.elements} WHERE ${multi.correlation} AND (${condition}))`;
}

function multiValuedOf(target: FilterTarget, attrPath: string): MultiValued {
  const multi = target.multiValued[normalise(target, attrPath)];
  if (!multi) throw invalidFilter(`\`${attrPath}\` is not a multi-valued attribute that can be filtered.`);
  return multi;
}

/** Attribute names are case-insensitive, and may carry their schema's URN. */
function normalise(target: FilterTarget, attrPath: string): string {
  const lower = attrPath.toLowerCase();
  for (const urn of target.schemas) {
    if (lower.startsWith(`${urn}:`)) return lower.slice(urn.length + 1);
  }
  return lower;
}

type Value = boolean | null | number | string | undefined;

function compare(column: Column, op: string, value: Value, path: string): FragmentSqlToken {
  const target = column.sql;
  if (op === 'pr') {
    return column.kind === 'text' || column.kind === 'exact'
      ? sql.fragment`(${target} IS NOT NULL AND ${target} <> '')`
      : sql.fragment`${target} IS NOT NULL`;
  }
  if (value === null) {
    if (op === 'eq') return sql.fragment`${target} IS NULL`;
    if (op === 'ne') return sql.fragment`${target} IS NOT NULL`;
    throw invalidFilter(`\`${path}\` can be compared with null only by eq and ne.`);
  }
  switch (column.kind) {
    case 'boolean': {
      if (typeof value !== 'boolean') throw invalidFilter(`\`${path}\` is compared with true or false.`);
      if (op === 'eq') return sql.fragment`${target} = ${value}`;
      if (op === 'ne') return sql.fragment`${target} IS DISTINCT FROM ${value}`;
      throw invalidFilter(`\`${path}\` is a boolean: only eq, ne and pr apply.`);
    }
    case 'datetime': {
      const at = typeof value === 'string' ? new Date(value) : null;
      if (!at || Number.isNaN(at.getTime())) throw invalidFilter(`\`${path}\` is compared with a date-time.`);
      const bound = sql.timestamp(at);
      const operators: Record<string, FragmentSqlToken> = {
        eq: sql.fragment`${target} = ${bound}`,
        ne: sql.fragment`${target} <> ${bound}`,
        gt: sql.fragment`${target} > ${bound}`,
        ge: sql.fragment`${target} >= ${bound}`,
        lt: sql.fragment`${target} < ${bound}`,
        le: sql.fragment`${target} <= ${bound}`,
      };
      const found = operators[op];
      if (!found) throw invalidFilter(`\`${op}\` does not apply to the date-time \`${path}\`.`);
      return found;
    }
    default: {
      if (typeof value !== 'string' && typeof value !== 'number') {
        throw invalidFilter(`\`${path}\` is compared with a string.`);
      }
      const given = String(value);
      const [left, right] =
        column.kind === 'text'
          ? [sql.fragment`lower(${target})`, sql.fragment`lower(${given}::text)`]
          : [target, sql.fragment`${given}::text`];
      const operators: Record<string, FragmentSqlToken> = {
        eq: sql.fragment`${left} = ${right}`,
        ne: sql.fragment`${left} IS DISTINCT FROM ${right}`,
        co: sql.fragment`strpos(${left}, ${right}) > 0`,
        sw: sql.fragment`left(${left}, length(${right})) = ${right}`,
        ew: sql.fragment`right(${left}, length(${right})) = ${right}`,
        gt: sql.fragment`${left} > ${right}`,
        ge: sql.fragment`${left} >= ${right}`,
        lt: sql.fragment`${left} < ${right}`,
        le: sql.fragment`${left} <= ${right}`,
      };
      const found = operators[op];
      if (!found) throw invalidFilter(`Unknown operator \`${op}\`.`);
      return found;
    }
  }
}
