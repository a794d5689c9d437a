import { z } from 'zod';
import { API_KEY_EVENTS } from './api-key-events.ts';
import { BILLING_EVENTS } from './billing-events.ts';
import { COFFRE_EVENTS } from './coffre-events.ts';
import { COLLECTION_EVENTS } from './collection-events.ts';
import { catalogSchema, type EventDeclaration, type JsonSchema } from './define.ts';
import { GDPR_EVENTS } from './gdpr-events.ts';
import { INTAKE_EVENTS } from './intake-events.ts';
import { MCP_TOKEN_EVENTS } from './mcp-token-events.ts';
import { MEMBER_EVENTS } from './member-events.ts';
import { PLANNED_EVENTS } from './planned-events.ts';
import { RECIPIENT_EVENTS } from './recipient-events.ts';
import { TRANSFER_EVENTS } from './transfer-events.ts';
import { SHARED_VIEWS } from './views.ts';
import { WEBHOOK_EVENTS } from './webhook-events.ts';

// The catalog of event types: one map from type to payload schema (zod), split
// by family over the files it spreads. `EventCatalogQueries.record` takes only
// its types, each with its own payload, so an unknown type or a wrong payload
// does not compile; `GET /v1/webhooks/events`, docs/events.md
// (scripts/events-doc.ts) and the SDK's event union (sdk/scripts/generate-types.ts)
// are generated from it; automation rules and webhook subscriptions are checked
// against it.
//
// `emitted: true` means this codebase records the event today, and its `data`
// schema is then a description of what the code writes, not a wish:
// test/event-catalog.test.ts drives the running API and worker and validates
// every row they record against it, rejecting undeclared members. The other
// types come from the spec's event families and rule triggers; their schemas
// are the shape they are planned to have.

export type { JsonSchema, JsonType } from './define.ts';

export const EVENT_FAMILIES = {
  transfer: 'Transfers: creation, scanning, approval, downloads and their end.',
  coffre: 'Vaults (data rooms).',
  collection: 'Collections.',
  request: 'Secure intakes (file requests): receiving files from third parties.',
  reply: 'Replies from recipients.',
  signature: 'Signatures.',
  identity: 'Identity verification of recipients.',
  member: 'Workspace members.',
  api_key: 'API keys.',
  mcp_token: 'MCP tokens: the bearers of agents on the hosted MCP endpoint.',
  workspace: 'Workspace settings and plan.',
  billing: 'Invoices, payments and the subscription.',
  domain: 'Custom domains.',
  session: 'Dashboard sessions.',
  webhook: 'Webhook endpoints themselves: when Valise stops delivering to one.',
  ping: 'Test deliveries.',
  recipient: 'The address book, and downloads completed through personal links.',
} as const;
export type EventFamily = keyof typeof EVENT_FAMILIES;

/** Every event type with its declaration; a type is named `<family>.<what>`, or is a family itself (`ping`). */
export const EVENTS = {
  ...TRANSFER_EVENTS,
  ...API_KEY_EVENTS,
  ...MCP_TOKEN_EVENTS,
  ...WEBHOOK_EVENTS,
  ...INTAKE_EVENTS,
  ...PLANNED_EVENTS,
  ...COLLECTION_EVENTS,
  ...RECIPIENT_EVENTS,
  ...COFFRE_EVENTS,
  ...GDPR_EVENTS,
  ...MEMBER_EVENTS,
  ...BILLING_EVENTS,
} satisfies Record<string, EventDeclaration>;

// A type declared in two parts would be silently overwritten by the spread.
const declared = [
  TRANSFER_EVENTS,
  API_KEY_EVENTS,
  MCP_TOKEN_EVENTS,
  WEBHOOK_EVENTS,
  INTAKE_EVENTS,
  PLANNED_EVENTS,
  COLLECTION_EVENTS,
  RECIPIENT_EVENTS,
  COFFRE_EVENTS,
  GDPR_EVENTS,
  MEMBER_EVENTS,
  BILLING_EVENTS,
].flatMap((part) => Object.keys(part));
for (const [index, type] of declared.entries()) {
  if (declared.indexOf(type) !== index) throw new Error(`event catalog: ${type} is declared twice`);
}

export type EventType = keyof typeof EVENTS;

/** The `data` an emitter writes for `T`. */
export type EventData<T extends EventType> = z.input<(typeof EVENTS)[T]['data']>;

/** One catalog entry, as served and documented: the payload as JSON Schema. */
export type EventDefinition = {
  type: EventType;
  family: EventFamily;
  description: string;
  emitted: boolean;
  data: JsonSchema;
};

/** `transfer.created` → `transfer`; `ping` → `ping`. */
type FamilyOf<T extends string> = T extends `${infer Family}.${string}` ? Family : T;
// Compiles only while every type is named `<family>.<what>`, or is a family itself.
const familyOf = (type: EventType): EventFamily => type.split('.')[0] as FamilyOf<EventType>;
const families = Object.keys(EVENT_FAMILIES);

/** The catalog, by family in the order of EVENT_FAMILIES, each family's types in the order declared. */
export const EVENT_CATALOG: readonly EventDefinition[] = (Object.keys(EVENTS) as EventType[])
  .map((type) => ({
    type,
    family: familyOf(type),
    description: EVENTS[type].description,
    emitted: EVENTS[type].emitted,
    data: catalogSchema(EVENTS[type].data, `${type} data`),
  }))
  .sort((a, b) => families.indexOf(a.family) - families.indexOf(b.family));

/** The shared views as JSON Schema, by title: documented once in docs/events.md. */
export const SHARED_VIEW_SCHEMAS: readonly JsonSchema[] = SHARED_VIEWS.map((view) => {
  const { $schema: _, ...schema } = catalogSchema(view);
  return schema;
});

export const EVENT_TYPES = EVENT_CATALOG.map((entry) => entry.type);

const known: ReadonlySet<string> = new Set(EVENT_TYPES);
export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && known.has(value);
}

export function findEvent(type: string): EventDefinition | undefined {
  return EVENT_CATALOG.find((entry) => entry.type === type);
}

/** The spec's supported `trigger_event` values for automation rules (Endpoints, Automation rules). */
export const RULE_TRIGGERS = [
  'transfer.created',
  'transfer.e2e_created',
  'transfer.downloaded',
  'transfer.first_download',
  'transfer.expired',
  'transfer.limit_reached',
  'transfer.geo_blocked',
  'transfer.password_failed',
  'transfer.approved',
  'transfer.rejected',
  'transfer.approval_requested',
  'api_key.created',
  'api_key.revoked',
  'api_key.rotated',
  'api_key.expired',
  'request.created',
  'request.deleted',
  'request.submission_received',
  'reply.received',
  'signature.completed',
  'identity.verified',
] as const satisfies readonly EventType[];

/** The envelope every webhook delivery carries (spec, Events: Delivery envelope). */
export const EventEnvelope = z
  .object({
    id: z
      .string()
      .regex(/^evt_[0-9a-f]{32}$/)
      .describe('Unique event id, for deduplication: `evt_` and 32 hex digits. Retries of a delivery keep it.'),
    type: z.enum(EVENT_TYPES).describe('The event type, such as `transfer.downloaded`.'),
    timestamp: z.iso.datetime().describe('When the event occurred (ISO 8601, UTC).'),
    data: z.record(z.string(), z.unknown()).describe('The type-specific payload: see `data_schema` for `type`.'),
  })
  .meta({ title: 'Event delivery' });

export const EVENT_ENVELOPE_SCHEMA: JsonSchema = catalogSchema(EventEnvelope);
