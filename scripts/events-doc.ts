import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  EVENT_CATALOG,
  EVENT_ENVELOPE_SCHEMA,
  EVENT_FAMILIES,
  type JsonSchema,
  RULE_TRIGGERS,
  SHARED_VIEW_SCHEMAS,
} from '../lib/events/catalog.ts';

// Prints the generated part of docs/events.md: the envelope table, then each
// family with its event types and their payload tables, all from the catalog.
// `sh scripts/node.sh scripts/events-doc.ts` and paste it between the markers;
// test/event-catalog.test.ts fails while the two differ.

const triggers: ReadonlySet<string> = new Set(RULE_TRIGGERS);

export function renderEventDocs(): string {
  const out: string[] = ['## Delivery envelope', '', ...table(EVENT_ENVELOPE_SCHEMA), ''];
  out.push('## Shared views', '', 'Payloads name these views instead of repeating them.', '');
  for (const view of SHARED_VIEW_SCHEMAS) {
    out.push(`### ${view.title}`, '', view.description ?? '', '', ...table(view, false), '');
  }
  const emitted = EVENT_CATALOG.filter((e) => e.emitted).length;
  out.push(
    `## Event types`,
    '',
    `${EVENT_CATALOG.length} types; ${emitted} are emitted today, the others are planned and their payloads are the ` +
      'shape they are designed to have.',
    '',
    '| Type | Emitted today | Rule trigger |',
    '|---|---|---|',
    ...EVENT_CATALOG.map(
      (e) =>
        `| [\`${e.type}\`](#${anchor(e.type)}) | ${e.emitted ? 'yes' : 'no'} | ${triggers.has(e.type) ? 'yes' : ''} |`,
    ),
    '',
  );
  for (const [family, summary] of Object.entries(EVENT_FAMILIES)) {
    const events = EVENT_CATALOG.filter((e) => e.family === family);
    out.push(`### ${family === 'ping' ? 'ping' : `${family}.*`}`, '', summary, '');
    for (const e of events) {
      const status = e.emitted ? 'Emitted today.' : 'Not emitted yet (planned).';
      const trigger = triggers.has(e.type) ? ' Can trigger automation rules.' : '';
      out.push(`#### \`${e.type}\``, '', `${status}${trigger} ${e.description}`, '', ...table(e.data), '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/**
 * One row per member, nested objects flattened to dotted paths (`transfer.id`),
 * arrays as `[]`. A shared view is named, and only where a payload departs from
 * it (a member added, left out or optional) are rows or notes added.
 */
function table(schema: JsonSchema, useShared = true): string[] {
  return ['| Field | Type | Required | Notes |', '|---|---|---|---|', ...rows(schema, '', useShared)];
}

function rows(schema: JsonSchema, prefix: string, useShared: boolean): string[] {
  const out: string[] = [];
  for (const [name, member] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    const required = schema.required?.includes(name) ? 'yes' : 'no';
    const view = useShared ? SHARED_VIEW_SCHEMAS.find((v) => v.title === member.title) : undefined;
    if (view) {
      const base = Object.keys(view.properties ?? {});
      const own = Object.keys(member.properties ?? {});
      const missing = base.filter((key) => !own.includes(key));
      const note = missing.length ? ` Without ${missing.map((k) => `\`${k}\``).join(', ')}.` : '';
      const link = `[\`${view.title}\`](#${anchor(view.title ?? '')})`;
      out.push(`| \`${path}\` | ${link} | ${required} | ${cell(`${member.description ?? ''}${note}`)} |`);
      const differs = (key: string) =>
        !base.includes(key) || view.required?.includes(key) !== member.required?.includes(key);
      out.push(...rows(only(member, own.filter(differs)), `${path}.`, useShared));
      continue;
    }
    out.push(`| \`${path}\` | ${typeOf(member)} | ${required} | ${cell(notes(member))} |`);
    if (member.properties) out.push(...rows(member, `${path}.`, useShared));
    if (member.items?.properties) out.push(...rows(member.items, `${path}[].`, useShared));
  }
  return out;
}

function only(schema: JsonSchema, keys: readonly string[]): JsonSchema {
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([key]) => keys.includes(key)));
  return { ...schema, properties };
}

function typeOf(schema: JsonSchema): string {
  const types = typeof schema.type === 'string' ? [schema.type] : [...schema.type];
  const named = types.map((t) => {
    if (t === 'array' && schema.items) return `${typeOf(schema.items)}[]`;
    if (t === 'string' && schema.format) return `string (${schema.format})`;
    return t;
  });
  return named.join(' or ');
}

function notes(schema: JsonSchema): string {
  const parts = [schema.description ?? ''];
  const values = schema.enum ?? schema.items?.enum;
  if (values && values.length <= 12) parts.push(`One of ${values.map((v) => `\`${v}\``).join(', ')}.`);
  if (schema.pattern) parts.push(`Pattern \`${schema.pattern}\`.`);
  return parts.filter(Boolean).join(' ');
}

/** GitHub's heading anchors: lower case, punctuation other than `-` and `_` dropped. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replaceAll(' ', '-');

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(renderEventDocs());
}
