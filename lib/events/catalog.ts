import { REVOCATION_REASONS } from '../vocabulary.ts';
// The catalog of event types, as data: what `GET /v1/webhooks/events` serves,
// what docs/events.md is generated from (scripts/events-doc.ts), and what
// automation rules and webhook subscriptions are checked against.
//
// `emitted: true` means this codebase records the event today, and its `data`
// schema is then a description of what the code writes, not a wish:
// test/event-catalog.test.ts drives the running API and worker and validates
// every row they record against it, rejecting undeclared members. The other
// types come from the spec's event families and rule triggers; their schemas
// are the shape they are planned to have.
//
// Schemas use a small subset of JSON Schema draft 2020-12 (object, string,
// integer, boolean, null, array, enum, pattern, format), inline, without $ref,
// so that any consumer can read them without a resolver. No schema forbids
// additional members: adding a member is a compatible change.

export type JsonType = 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array';

export type JsonSchema = {
  $schema?: string;
  title?: string;
  description?: string;
  type: JsonType | readonly JsonType[];
  format?: 'date-time' | 'uuid' | 'email';
  pattern?: string;
  enum?: readonly (string | null)[];
  minimum?: number;
  items?: JsonSchema;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
};

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
  workspace: 'Workspace settings and plan.',
  billing: 'Invoices, payments and the subscription.',
  domain: 'Custom domains.',
  session: 'Dashboard sessions.',
  webhook: 'Webhook endpoints themselves: when Valise stops delivering to one.',
  ping: 'Test deliveries.',
} as const;
export type EventFamily = keyof typeof EVENT_FAMILIES;

export type EventDefinition = {
  type: string;
  family: EventFamily;
  description: string;
  emitted: boolean;
  data: JsonSchema;
};

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

// ---- Schema builders: each returns a plain JSON Schema object. ----

type Extra = Omit<JsonSchema, 'type'>;
const str = (description: string, extra: Extra = {}): JsonSchema => ({ type: 'string', description, ...extra });
const int = (description: string, extra: Extra = {}): JsonSchema => ({ type: 'integer', description, ...extra });
const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
const dateTime = (description: string) => str(description, { format: 'date-time' });
const uuid = (description: string) => str(description, { format: 'uuid' });
const oneOf = (values: readonly string[], description: string) => str(description, { enum: values });
const list = (items: JsonSchema, description: string): JsonSchema => ({ type: 'array', description, items });

function nullable(schema: JsonSchema): JsonSchema {
  const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
  return { ...schema, type: [...types, 'null'], ...(schema.enum ? { enum: [...schema.enum, null] } : {}) };
}

/** An object whose members are all required, except those named in `optional`. */
function object(properties: Record<string, JsonSchema>, optional: readonly string[] = [], description?: string) {
  const required = Object.keys(properties).filter((key) => !optional.includes(key));
  return { type: 'object', ...(description ? { description } : {}), properties, required } satisfies JsonSchema;
}

// Derived views keep the title of the view they come from, so readers (and
// docs/events.md) can tell they are that view, narrowed or widened.
const titled = (schema: JsonSchema) => (schema.title ? { title: schema.title } : {});

/** The same view with more (required) members. */
function extend(schema: ReturnType<typeof object>, more: Record<string, JsonSchema>, description: string): JsonSchema {
  return { ...titled(schema), ...object({ ...schema.properties, ...more }), description };
}

// ---- Shared views: what events say about a resource. ----

function shared<S extends ReturnType<typeof object>>(title: string, schema: S): S {
  return { title, ...schema };
}

/** lib/transfers/create.ts `eventView`: ids and state, never passwords or keys. */
export const TransferEventView = shared(
  'TransferEventView',
  object(
    {
      id: uuid('The transfer id.'),
      short_code: str('Readable identifier, also the share link path `/t/<short_code>`.'),
      status: oneOf(['active', 'expired', 'deleted', 'scanning'], 'The transfer status after the change.'),
      transfer_title: nullable(str('Title given by the sender.')),
      encryption_mode: oneOf(['server', 'e2e'], '`server` (default) or end-to-end `e2e`.'),
      recipient: nullable(str('E-mail address the share link is sent to.')),
      expires_at: dateTime('When the transfer expires.'),
    },
    [],
    'The transfer.',
  ),
);

const TransferCreatedView = extend(
  TransferEventView,
  {
    files_count: int('Number of files declared.', { minimum: 1 }),
    total_bytes: int('Sum of the declared file sizes, in bytes (of the encrypted blobs in `e2e` mode).', {
      minimum: 0,
    }),
  },
  'The transfer, with its file totals.',
);

/** lib/api-keys/service.ts `eventView`: never the key value or its hash. */
export const ApiKeyEventView = shared(
  'ApiKeyEventView',
  object(
    {
      id: uuid('The key id.'),
      name: str('The key name.'),
      key_prefix: str('Prefix plus six characters, as lists show it; never the full value.'),
      key_type: oneOf(['full', 'restricted'], '`full` or `restricted`.'),
      scopes: list(str('A scope, `resource:action`, or `*`.'), 'Scopes held; `["*"]` for a full key.'),
      environment: oneOf(['live', 'test', 'sandbox'], 'The key environment.'),
    },
    [],
    'The API key.',
  ),
);

// Views of resources this codebase does not have yet: planned shapes.
const CoffreView = object(
  { id: str('The vault id.'), name: str('The vault name.'), created_at: dateTime('When it was created.') },
  [],
  'The vault.',
);
const CollectionView = object(
  {
    id: str('The collection id.'),
    name: str('The collection name.'),
    items_count: int('Items in the collection after the change.', { minimum: 0 }),
  },
  [],
  'The collection.',
);
const RequestView = object(
  {
    id: str('The intake id (`in_…`).'),
    title: nullable(str('Title shown to the third party.')),
    status: oneOf(['open', 'completed', 'expired', 'deleted'], 'The request status after the change.'),
    expires_at: nullable(dateTime('When the request stops accepting files.')),
  },
  [],
  'The secure intake (file request).',
);
const SubmissionView = object(
  {
    id: str('The intake document id (`doc_…`).'),
    client_reference: nullable(str('Opaque reference given by the submitter, such as a case number.')),
    files_count: int('Files submitted.', { minimum: 0 }),
    total_size_bytes: int('Sum of the encrypted blob sizes.', { minimum: 0 }),
    source: oneOf(['widget', 'api'], 'How it was submitted.'),
  },
  [],
  'The submission (intake document).',
);
const MemberView = object(
  {
    user_id: uuid('The member user id.'),
    email: str('The member e-mail address.', { format: 'email' }),
    role: str('The member role, such as `owner`, `admin` or `member`.'),
  },
  [],
  'The workspace member.',
);
const WorkspaceView = object(
  { id: uuid('The workspace id.'), name: str('The workspace name.'), plan: str('The current plan.') },
  [],
  'The workspace.',
);
const InvoiceView = object(
  {
    id: str('The invoice id.'),
    number: nullable(str('Human-readable invoice number.')),
    amount: int('Amount in the smallest currency unit (cents).', { minimum: 0 }),
    currency: str('ISO 4217 currency code, lower case.'),
    status: str('Invoice status at the processor.'),
  },
  [],
  'The invoice.',
);
const DomainView = object(
  { id: str('The domain id.'), domain: str('The host name, such as `files.example.com`.') },
  [],
  'The custom domain.',
);
const SessionView = object(
  {
    id: str('The session id.'),
    user_id: uuid('Whose session it is.'),
    ip_address: nullable(str('Client address at sign-in.')),
    user_agent: nullable(str('Client user agent at sign-in.')),
    expires_at: dateTime('When the session ends unless renewed.'),
  },
  [],
  'The dashboard session.',
);

// ---- The catalog. ----

function event<const T extends string>(
  type: T,
  description: string,
  data: Record<string, JsonSchema>,
  options: { emitted?: boolean; optional?: readonly string[] } = {},
) {
  const family = type.split('.')[0] as string;
  if (!(family in EVENT_FAMILIES)) throw new Error(`event ${type}: unknown family ${family}`);
  return {
    type,
    family: family as EventFamily,
    description,
    emitted: options.emitted ?? false,
    data: { $schema: DRAFT_2020_12, title: `${type} data`, ...object(data, options.optional) } as JsonSchema,
  } satisfies EventDefinition;
}

const EMITTED = { emitted: true } as const;
const transfer = TransferEventView;
const apiKey = ApiKeyEventView;
const ipAddress = str('Address of the client that made the attempt.');

export const API_KEY_REVOCATION_REASONS = REVOCATION_REASONS;

export const EVENT_CATALOG = [
  // transfer.*
  event(
    'transfer.created',
    'A transfer was created (`POST /v1/transfers`); its files are not uploaded yet, so `status` is `scanning`.',
    { transfer: TransferCreatedView },
    EMITTED,
  ),
  event(
    'transfer.e2e_created',
    'An end-to-end encrypted transfer was created. Fires right after `transfer.created`, with the same payload.',
    { transfer: TransferCreatedView },
    EMITTED,
  ),
  event(
    'transfer.scanned',
    'Every file of the transfer was verified and scanned. Fires once; an infected transfer is already `deleted`.',
    {
      transfer,
      scan_status: oneOf(
        ['clean', 'infected', 'not_scanned_too_large', 'not_scanned_e2e'],
        'The verdict: `not_scanned_too_large` when a file exceeds what the scanner reads (the transfer is active, with a warning); `not_scanned_e2e` for ciphertext.',
      ),
    },
    EMITTED,
  ),
  event(
    'transfer.scan_clean',
    'The scan found nothing and the transfer became `active`. Fires after `transfer.scanned` when the verdict is `clean`.',
    { transfer },
    EMITTED,
  ),
  event(
    'transfer.scan_too_large',
    'Some files were too large for the malware scanner to read whole: the transfer became `active` with `scan_status` `not_scanned_too_large`, and its recipient is warned. Fires after `transfer.scanned`.',
    {
      transfer,
      files: list(
        object({ id: uuid('The file id.'), size: int('Its size in bytes.', { minimum: 0 }) }),
        'The files that were not scanned.',
      ),
    },
    EMITTED,
  ),
  event(
    'transfer.scan_infected',
    'A file matched a malware signature: the transfer was deleted (`status_reason` `infected`) and its content destroyed.',
    { transfer, signatures: list(str('A malware signature name.'), 'The signature of each infected file.') },
    EMITTED,
  ),
  event(
    'transfer.approval_requested',
    'A transfer that requires approval became active with no decision yet and waits for one (`POST /v1/transfers/{id}/approve`). Not emitted when the decision was taken while it uploaded or scanned.',
    { transfer },
    EMITTED,
  ),
  event(
    'transfer.approved',
    'A transfer in the approval circuit was approved, at any point of its life; it can be downloaded once active.',
    { transfer, approved_by: uuid('User id of the deciding caller.'), note: nullable(str('The approval note.')) },
    EMITTED,
  ),
  event(
    'transfer.rejected',
    'A transfer in the approval circuit was rejected; downloads stay blocked.',
    { transfer, approved_by: uuid('User id of the deciding caller.'), note: nullable(str('The approval note.')) },
    EMITTED,
  ),
  event(
    'transfer.downloaded',
    'A recipient obtained download links (`POST /v1/shares/{short_code}/download-links`): one download counted.',
    { transfer, total_downloads: int('Downloads counted so far, this one included.', { minimum: 1 }) },
    EMITTED,
  ),
  event(
    'transfer.first_download',
    'The first download of a transfer. Fires with, and after, the `transfer.downloaded` it accompanies.',
    { transfer, total_downloads: int('Always 1.', { minimum: 1 }) },
    EMITTED,
  ),
  event(
    'transfer.limit_reached',
    'The download that reached `max_downloads`; later attempts are refused (`limit_reached`).',
    { transfer, total_downloads: int('Equal to the transfer `max_downloads`.', { minimum: 1 }) },
    EMITTED,
  ),
  event(
    'transfer.password_failed',
    'A download attempt on a password-protected transfer came with a missing or wrong password.',
    { transfer, ip_address: ipAddress },
    EMITTED,
  ),
  event('transfer.geo_blocked', 'A download attempt was refused because of the country it came from.', {
    transfer,
    ip_address: ipAddress,
    country_code: str('ISO 3166-1 alpha-2 country of the attempt.'),
  }),
  event(
    'transfer.expired',
    'The transfer reached `expires_at`: it is `expired`, its keys and content destroyed.',
    { transfer, reason: oneOf(['expired'], 'Always `expired`.') },
    EMITTED,
  ),
  event(
    'transfer.deleted',
    'The transfer was deleted and its keys destroyed: revoked by its sender (`DELETE /v1/transfers/{id}`), or ' +
      'its files did not all arrive before the upload deadline. (Infected transfers fire `transfer.scan_infected`.)',
    { transfer, reason: oneOf(['revoked', 'upload_incomplete'], 'Why it was deleted.') },
    EMITTED,
  ),

  event(
    'transfer.expiry_extended',
    'An `extend_expiry` automation rule moved `expires_at` later (capped at the longest expiry allowed).',
    {
      transfer,
      previous_expires_at: dateTime('The expiry before the extension.'),
      rule_id: uuid('The rule whose action extended it.'),
      cause_event_id: str('The event that set the rule off.'),
    },
    EMITTED,
  ),
  event(
    'transfer.archived',
    'An `archive_transfer` automation rule archived the transfer: it left the default list, its link still works.',
    {
      transfer,
      rule_id: uuid('The rule whose action archived it.'),
      cause_event_id: str('The event that set the rule off.'),
    },
    EMITTED,
  ),

  // coffre.*
  event('coffre.created', 'A vault (data room) was created.', { coffre: CoffreView }),
  event('coffre.accessed', 'Someone opened a vault.', {
    coffre: CoffreView,
    ip_address: nullable(str('Address of the visitor.')),
    accessed_by: nullable(str('E-mail address of the visitor, when known.')),
  }),
  event('coffre.item_uploaded', 'A file was added to a vault.', {
    coffre: CoffreView,
    item: object({ id: str('The item id.'), name: str('File name.'), size: int('Size in bytes.', { minimum: 0 }) }),
  }),

  // collection.*
  event('collection.created', 'A collection was created.', { collection: CollectionView }),
  event('collection.updated', 'A collection was changed.', {
    collection: CollectionView,
    changed: list(str('A member name.'), 'The members that were sent.'),
  }),
  event('collection.deleted', 'A collection was deleted.', { collection: CollectionView }),
  event('collection.item_added', 'An item was added to a collection.', {
    collection: CollectionView,
    item: object({ id: str('The item id.'), kind: str('What the item is, such as `transfer`.') }),
  }),

  // request.*
  event('request.created', 'A secure intake (file request) was created.', { request: RequestView }),
  event('request.submitted', 'A third party finished submitting files to an intake.', {
    request: RequestView,
    submission: SubmissionView,
  }),
  event('request.submission_received', 'A submission was stored and is ready to fetch (document `received`).', {
    request: RequestView,
    submission: SubmissionView,
  }),
  event('request.completed', 'An intake received everything it asked for and was closed.', { request: RequestView }),
  event('request.expired', 'An intake reached its expiry and stopped accepting files.', { request: RequestView }),
  event('request.deleted', 'An intake was deleted.', { request: RequestView }),

  // reply, signature, identity
  event('reply.received', 'A recipient replied to a transfer with files of their own.', {
    transfer,
    reply: object({
      id: str('The reply id.'),
      from: nullable(str('E-mail address of the replier, when known.')),
      files_count: int('Files in the reply.', { minimum: 0 }),
    }),
  }),
  event('signature.completed', 'Every requested signer signed.', {
    signature: object({
      id: str('The signature request id.'),
      transfer_id: nullable(uuid('The transfer it belongs to.')),
      signers: list(str('E-mail address of a signer.', { format: 'email' }), 'Who signed.'),
      completed_at: dateTime('When the last signature arrived.'),
    }),
  }),
  event('identity.verified', 'A recipient proved their identity before accessing a transfer.', {
    verification: object({
      id: str('The verification id.'),
      transfer_id: nullable(uuid('The transfer it unlocks.')),
      email: str('The verified address.', { format: 'email' }),
      method: str('How it was verified, such as `email_code`.'),
      verified_at: dateTime('When it succeeded.'),
    }),
  }),

  // member.*
  event('member.invited', 'Someone was invited to the workspace.', {
    member: MemberView,
    invited_by: nullable(uuid('User id of the inviter.')),
  }),
  event('member.joined', 'An invited person joined the workspace.', { member: MemberView }),
  event('member.removed', 'A member was removed from the workspace.', {
    member: MemberView,
    removed_by: nullable(uuid('User id of whoever removed them; null when removed by provisioning.')),
  }),
  event('member.role_changed', 'A member role changed.', {
    member: MemberView,
    previous_role: str('The role before the change.'),
  }),

  // api_key.*
  event(
    'api_key.created',
    'An API key was created (`POST /v1/api-keys`, or one key per environment by `admin bootstrap`).',
    { api_key: apiKey },
    EMITTED,
  ),
  event(
    'api_key.updated',
    'An API key was changed (`PATCH /v1/api-keys/{id}`).',
    {
      api_key: apiKey,
      changed: list(
        oneOf(['name', 'description', 'is_active', 'allowed_ips', 'scopes', 'max_uses'], 'A member name.'),
        'The members the request sent (never `mfa_code`), whether or not their value differed.',
      ),
    },
    EMITTED,
  ),
  event(
    'api_key.revoked',
    'An API key was revoked (`DELETE /v1/api-keys/{id}`); it stopped authenticating at once. Fires once per key.',
    { api_key: apiKey, reason: oneOf(API_KEY_REVOCATION_REASONS, 'The revocation reason; `manual` by default.') },
    EMITTED,
  ),
  event(
    'api_key.rotated',
    'An API key got a new value (`POST /v1/api-keys/{id}/rotate`); older values work until the grace period ends.',
    { api_key: apiKey, previous_key_valid_until: dateTime('When the previous values stop authenticating.') },
    EMITTED,
  ),
  event(
    'api_key.expired',
    'An API key reached its `expires_at` (recorded by the `expireApiKey` workflow).',
    { api_key: apiKey },
    EMITTED,
  ),

  // workspace.*
  event('workspace.updated', 'Workspace settings changed.', {
    workspace: WorkspaceView,
    changed: list(str('A setting name.'), 'The settings that changed.'),
  }),
  event('workspace.plan_changed', 'The workspace moved to another plan.', {
    workspace: WorkspaceView,
    previous_plan: str('The plan before the change.'),
  }),

  // billing.*
  event('billing.invoice_paid', 'An invoice was paid.', {
    invoice: InvoiceView,
    paid_at: dateTime('When the payment succeeded.'),
  }),
  event('billing.payment_failed', 'A payment attempt failed.', {
    invoice: InvoiceView,
    attempt_count: int('Attempts so far.', { minimum: 1 }),
    next_attempt_at: nullable(dateTime('When the processor retries; null when it gave up.')),
  }),
  event('billing.subscription_updated', 'The subscription changed (plan, status, renewal).', {
    subscription: object({
      id: str('The subscription id.'),
      plan: str('The plan.'),
      status: str('The subscription status at the processor.'),
      current_period_end: nullable(dateTime('When the current period ends.')),
      cancel_at_period_end: bool('Whether it ends instead of renewing.'),
    }),
  }),

  // domain.*
  event('domain.verified', 'A custom domain passed DNS verification.', { domain: DomainView }),
  event('domain.failed', 'A custom domain failed DNS verification.', {
    domain: DomainView,
    reason: str('What was wrong, such as a missing record.'),
  }),

  // session.*
  event('session.created', 'Someone signed in to the dashboard.', { session: SessionView }),
  event('session.revoked', 'A dashboard session was ended before its expiry.', {
    session: SessionView,
    reason: str('Why, such as `signed_out` or `revoked_by_admin`.'),
  }),

  // webhook.*
  event(
    'webhook.disabled',
    'A webhook failed every delivery attempt for `WEBHOOK_DISABLE_AFTER` (3 days by default) and was turned off ' +
      '(`is_active` false). Sent to the workspace other webhooks subscribed to it; re-enable with `PATCH /v1/webhooks`.',
    {
      webhook: object(
        {
          id: uuid('The webhook id.'),
          url: str('Its URL.'),
          failure_count: int('Failed attempts so far.', { minimum: 0 }),
          last_status: nullable(int('The HTTP status of the last attempt; null when it got no answer.')),
        },
        [],
        'The disabled webhook.',
      ),
      reason: oneOf(['failing'], 'Always `failing`.'),
      failing_since: dateTime('When its current run of failures began.'),
    },
    EMITTED,
  ),

  // ping
  event(
    'ping',
    'A test delivery (`POST /v1/webhooks/{id}/test`), sent to that one webhook whatever it subscribes to; ' +
      'carries no business data.',
    { webhook_id: uuid('The webhook the test was sent to.'), message: str('A fixed greeting.') },
    EMITTED,
  ),
];

/** Views several events share, by title: documented once in docs/events.md. */
export const SHARED_VIEWS: readonly JsonSchema[] = [TransferEventView, ApiKeyEventView];

export type EventType = (typeof EVENT_CATALOG)[number]['type'];

export const EVENT_TYPES: string[] = EVENT_CATALOG.map((entry) => entry.type);

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
export const EVENT_ENVELOPE_SCHEMA: JsonSchema = {
  $schema: DRAFT_2020_12,
  title: 'Event delivery',
  ...object({
    id: str('Unique event id, for deduplication: `evt_` and 32 hex digits. Retries of a delivery keep it.', {
      pattern: '^evt_[0-9a-f]{32}$',
    }),
    type: str('The event type, such as `transfer.downloaded`.', { enum: EVENT_TYPES }),
    timestamp: dateTime('When the event occurred (ISO 8601, UTC).'),
    data: { type: 'object', description: 'The type-specific payload: see `data_schema` for `type`.' },
  }),
};

// `satisfies` checks the triggers at compile time; this checks the catalog itself when loaded.
for (const [index, type] of EVENT_TYPES.entries()) {
  if (EVENT_TYPES.indexOf(type) !== index) throw new Error(`event catalog: ${type} is listed twice`);
}
for (const trigger of RULE_TRIGGERS) {
  if (!known.has(trigger)) throw new Error(`event catalog: rule trigger ${trigger} is not in the catalog`);
}
