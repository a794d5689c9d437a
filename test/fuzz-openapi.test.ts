import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Request, RequestRoute } from '@hapi/hapi';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { isScimProtocolPath } from '../api/errors.ts';
import { totpCode } from '../lib/crypto/totp.ts';
import { type ApiResponse, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { envelopeProblem, scimErrorProblem } from './helpers/error-envelope.ts';
import { createOpenApiValidator, type Exchange, exchangeOf } from './helpers/openapi-check.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import { HOSTILE_STRINGS, hostile, type JsonSchema, valid } from './helpers/schema-arbitrary.ts';
import { content, createTransfer, put, waitForTransfer } from './helpers/transfers.ts';

// Every operation of GET /v1/openapi.json, fuzzed from the document itself (issue #26): its path,
// query and header parameters and its request body are drawn from the schemas it publishes
// (test/helpers/schema-arbitrary.ts: values the schema accepts, and hostile ones), its path
// parameters also from the real rows of a seeded workspace, with the credential its security
// scheme names (an API key holding every scope, a SCIM token, an MCP token, a publishable key,
// none), and now and then another one. Nothing is written per route: an operation added to the
// document is fuzzed as it is published. The public pages (/, /t/…, /c/…, /i/…, /v/…, /docs/…)
// are fuzzed beside them with hostile paths, queries and forms.
//
// The property, for every answer: the status is below 500 (GET /v1/health may answer 503 with its
// report), it carries an X-Request-Id, an error (>= 400) is the spec's envelope with a code from
// the spec's table and that code's status (RFC 7644's error on the SCIM protocol routes; a status an
// operation documents with a body of its own is held to its schema), the answer agrees with the
// document (test/helpers/openapi-check.ts: its status is documented, its body matches that status's
// schema), and the server logged no error for it. Requests are not held to the document: the server
// takes some hostile ones leniently (joi converts "1" to 1, trims a trailing "\r");
// test/openapi-validator.test.ts holds a real client's requests.
// Pages are held to "no 5xx, X-Request-Id".
//
// Everything runs one after another: the pages, then the operations that read, those that write, and
// last those that end what they touch (DELETE, close, revoke, rotate), so the real rows stay alive for
// most of the run. Each operation
// lists every distinct violation it met (with a curl reproducer) rather than stopping at the first.
// The cases tried per operation are logged and written to .cache/logs/fuzz-openapi-counts.json.
//
// Knobs (environment):
//   FUZZ_SCALE=4           multiply the cases (default 1: 40 per operation, 60 per page, about a minute and a half)
//   FUZZ_SEED=123          replay a seed (each operation logs the seed it used)
//   FUZZ_OPERATION=GET /v1/transfers/{id}   fuzz only the operations whose "METHOD path" contains this
//   FUZZ_VERBOSE=1         log every case: the request, its status and the start of the answer
//   FUZZ_STRICT_LOGS=0     do not fail on an error the server logged for a request it answered below 500
//                          (on by default: a swallowed failure, such as an audit entry not written)

const SCALE = Number(process.env.FUZZ_SCALE ?? '1');
const CASES_PER_OPERATION = Math.max(1, Math.round(40 * SCALE));
const CASES_PER_PAGE = Math.max(1, Math.round(60 * SCALE));
const ONLY = process.env.FUZZ_OPERATION;
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
const STRICT_LOGS = process.env.FUZZ_STRICT_LOGS !== '0';
const COUNTS_FILE = path.join(process.cwd(), '.cache/logs/fuzz-openapi-counts.json');

/**
 * Operations not fuzzed, each with its reason. Empty: every operation of the document is fuzzed.
 * A test below fails when an entry names no operation (a stale exemption hides nothing silently).
 */
const EXEMPT: Record<string, string> = {};

// ---------------------------------------------------------------------------
// The document, as a client reads it.

type Parameter = { name: string; in: string; required?: boolean; schema?: JsonSchema; $ref?: string };
type DocResponse = { $ref?: string; content?: Record<string, { schema?: JsonSchema }> };
type DocOperation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, DocResponse>;
  security?: Array<Record<string, string[]>>;
};
type Document = {
  paths: Record<string, Record<string, DocOperation>>;
  components: { parameters?: Record<string, Parameter> };
  security?: Array<Record<string, string[]>>;
};

/** A credential a security scheme of the document asks for. */
type Credential = 'apiKey' | 'scimToken' | 'mcpToken' | 'publishableKey' | 'none';
const CREDENTIAL_OF_SCHEME: Record<string, Credential> = {
  bearer: 'apiKey',
  scimToken: 'scimToken',
  mcpToken: 'mcpToken',
  publishableKey: 'publishableKey',
};

type Target = {
  /** `METHOD /path`, as the document spells the path. */
  key: string;
  method: string;
  path: string;
  operation: DocOperation;
  parameters: Parameter[];
  credentials: Credential[];
};

function targetsOf(document: Document): Target[] {
  const targets: Target[] = [];
  for (const [docPath, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = (operation.parameters ?? []).map((p) =>
        p.$ref ? (document.components.parameters?.[p.$ref.split('/').pop() ?? ''] ?? p) : p,
      );
      const security = operation.security ?? document.security ?? [];
      const credentials =
        security.length === 0
          ? (['none'] as Credential[])
          : security.map((requirement) => {
              const scheme = Object.keys(requirement)[0] ?? '';
              const credential = CREDENTIAL_OF_SCHEME[scheme];
              if (!credential)
                throw new Error(`${method} ${docPath}: security scheme ${scheme} has no credential here`);
              return credential;
            });
      targets.push({
        key: `${method.toUpperCase()} ${docPath}`,
        method: method.toUpperCase(),
        path: docPath,
        operation,
        parameters,
        credentials,
      });
    }
  }
  return targets;
}

/** Reads first (0), writes next (1), and last (2) what ends the rows it touches. */
function phaseOf(target: Target): number {
  if (['GET', 'HEAD', 'OPTIONS'].includes(target.method)) return 0;
  if (
    target.method === 'DELETE' ||
    /\.(close|revoke|rotate|disable|delete|remove)/i.test(target.operation.operationId)
  ) {
    return 2;
  }
  return 1;
}

/** In the last phase: the deepest paths first (an intake's publishable key before the intake), DELETE last among equals. */
function ending(a: Target, b: Target): number {
  const depth = (target: Target) => target.path.split('/').length;
  return depth(b) - depth(a) || Number(a.method === 'DELETE') - Number(b.method === 'DELETE');
}

// ---------------------------------------------------------------------------
// The world: a server, a seeded workspace, and the credentials each scheme asks for.

type Seen = { exchange: Exchange | undefined; route: RequestRoute };

type World = {
  api: TestApi;
  ws: TestWorkspace;
  document: Document;
  validator: ReturnType<typeof createOpenApiValidator>;
  receiver: Receiver;
  secrets: Record<Credential, string | undefined>;
  /** Real values for a path parameter, by the path up to it: `/v1/transfers/{id}`. */
  pools: Record<string, string[]>;
  /** Real values for the public pages' parameters, by page path. */
  pagePools: Record<string, string[]>;
  bodyIds: string[];
  seen: Map<string, Seen>;
  waiting: Map<string, (seen: Seen | undefined) => void>;
  /** Errors the server logged, by request id. */
  serverErrors: Map<string, string>;
};

let world: World;
const counts: Record<string, { cases: number; statuses: Record<string, number> }> = {};

test.before(async () => {
  const api = await startApi({
    RATE_LIMIT_READ: '1000000',
    RATE_LIMIT_WRITE: '1000000',
    RATE_LIMIT_EXPENSIVE: '1000000',
    RATE_LIMIT_PUBLIC: '1000000',
    RATE_LIMIT_AUTH_FAILURES: '1000000',
    MFA_FAILURES_PER_15_MIN: '1000000',
    // Webhooks aim at a local receiver: test pings and retries are answered at once.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  // fetch reuses a connection until a second before the server's advertised keep-alive timeout
  // (Node's 5 s); building a route's arbitraries can block this process for longer than that
  // second on loaded cores, and the next request then goes out on a socket the server has just
  // closed as idle: ECONNRESET, "fetch failed", the server never having read it (seen in a
  // `make test` run). A longer idle timeout leaves that race to connections idle for a minute.
  api.server.listener.keepAliveTimeout = 65_000;
  const seen = new Map<string, Seen>();
  const waiting = new Map<string, (seen: Seen | undefined) => void>();
  const serverErrors = new Map<string, string>();
  api.server.events.on({ name: 'request', channels: ['error', 'app'] }, (request, event) => {
    if (!event.tags.includes('error')) return;
    const detail = event.error instanceof Error ? event.error.message : JSON.stringify(event.data ?? null);
    serverErrors.set(request.app.requestId, `[${event.tags.join(',')}] ${detail}`.slice(0, 300));
  });
  // The exchange as the server saw it, read once the answer is sent (as a validating proxy would).
  api.server.events.on('response', (request: Request) => {
    let exchange: Exchange | undefined;
    try {
      exchange = exchangeOf(request);
    } catch {
      exchange = undefined;
    }
    const entry = { exchange, route: request.route };
    const wake = waiting.get(request.app.requestId);
    if (wake) {
      waiting.delete(request.app.requestId);
      wake(entry);
    } else seen.set(request.app.requestId, entry);
  });
  const documentResponse = await api.call('GET', '/v1/openapi.json');
  if (documentResponse.status !== 200) throw new Error(`GET /v1/openapi.json: ${documentResponse.status}`);
  const document = documentResponse.body as Document;
  const receiver = await startReceiver();
  const ws = await api.workspace('Fuzz OpenAPI');
  const seeded = await seed(api, ws, receiver);
  seen.clear();
  serverErrors.clear();
  world = {
    api,
    ws,
    document,
    validator: createOpenApiValidator(document as never),
    receiver,
    ...seeded,
    seen,
    waiting,
    serverErrors,
  };
});

test.after.always(async () => {
  if (Object.keys(counts).length > 0) {
    await mkdir(path.dirname(COUNTS_FILE), { recursive: true });
    const perOperation = Object.entries(counts).filter(([key]) => !key.startsWith('PAGE '));
    const cases = perOperation.map(([, c]) => c.cases).sort((a, b) => a - b);
    const summary = {
      operations: perOperation.length,
      total_cases: cases.reduce((a, b) => a + b, 0),
      min_cases: cases[0] ?? 0,
      median_cases: cases[Math.floor(cases.length / 2)] ?? 0,
      scale: SCALE,
      exempt: EXEMPT,
      per_route: counts,
    };
    await writeFile(COUNTS_FILE, `${JSON.stringify(summary, null, 2)}\n`);
  }
  await world?.receiver.close();
  await world?.api.close();
});

async function seed(api: TestApi, ws: TestWorkspace, receiver: Receiver) {
  const key = ws.keys.live;
  const ok = async (method: string, url: string, options: Parameters<TestApi['call']>[2] = {}) => {
    const response = await api.call(method, url, { key, ...options });
    if (response.status >= 300) throw new Error(`seed: ${method} ${url}: ${response.status} ${response.text}`);
    return response.body;
  };
  const lastSegment = (url: string) => new URL(url).pathname.split('/').pop() ?? '';

  // Transfers: one active (its share code, download and archive tokens), one still uploading.
  const bytes = content(2048);
  const active = await createTransfer(api, key, {
    transfer_title: 'Fuzzed',
    files: [{ name: 'a.bin', size: bytes.length, mime_type: 'application/octet-stream' }],
  });
  const [upload] = active.upload_urls;
  if (!upload) throw new Error('seed: no upload URL');
  await put(upload.url, bytes);
  const pending = await createTransfer(api, key, {
    files: [
      { name: 'later.bin', size: 10 },
      { name: 'b.bin', size: 5 },
    ],
  });
  await waitForTransfer(api, key, active.transfer.id, (t) => t.status === 'active');
  const code = active.transfer.short_code;
  const downloadLinks = await ok('POST', `/v1/shares/${code}/download-links`, { key: undefined, body: {} });
  const archiveLink = await ok('POST', `/v1/shares/${code}/archive-link`, { key: undefined, body: {} });

  // Webhooks (to the local receiver), with one delivery; a rule; a folder; a recipient.
  const hook = await ok('POST', '/v1/webhooks', { body: { url: receiver.url(), events: ['transfer.created'] } });
  await ok('POST', `/v1/webhooks/${hook.id}/test`);
  const deliveries = await ok('GET', `/v1/webhooks/${hook.id}/deliveries`);
  const rule = await ok('POST', '/v1/rules', {
    body: { name: 'Fuzz', trigger_event: 'transfer.created', action_type: 'archive_transfer' },
  });
  const folder = await ok('POST', '/v1/folders', { body: { name: 'Fuzz' } });
  const recipient = await ok('POST', '/v1/recipients', {
    body: { email: 'fuzz-recipient@example.com', tags: ['vip'] },
  });

  // A collection of the active transfer, with its share link.
  const collection = await ok('POST', '/v1/collections', {
    body: { title: 'Fuzz', transfer_ids: [active.transfer.id, pending.transfer.id] },
  });

  // An intake, its publishable keys (one kept, one to revoke), a submission.
  const intake = await ok('POST', '/v1/intakes', { body: { title: 'Fuzz intake' } });
  const spareKey = await ok('POST', `/v1/intakes/${intake.id}/publishable-keys`, { body: {} });
  const submission = await ok('POST', `/v1/intakes/${intake.id}/submissions`, {
    key: intake.publishable_key.key,
    body: { files: [{ name: 'doc.pdf', size: 4 }] },
  });

  // A vault, an item, a member (its access token).
  const vault = await ok('POST', '/v1/coffres', { body: { name: 'Fuzz room' } });
  const item = await ok('POST', `/v1/coffres/${vault.id}/items`, { body: { name: 'kept.bin', size: 4 } });
  const member = await ok('POST', `/v1/coffres/${vault.id}/members`, {
    body: { email: 'fuzz-member@example.com', access: 'upload' },
  });

  // Credentials of the other schemes: MCP and SCIM tokens (one kept, one to revoke), and SCIM's rows.
  const mcpToken = await ok('POST', '/v1/mcp/tokens', { body: { name: 'fuzz agent', scopes: ['transfers:read'] } });
  const spareMcp = await ok('POST', '/v1/mcp/tokens', { body: { name: 'fuzz spare', scopes: ['transfers:read'] } });
  const scimToken = await ok('POST', '/v1/scim/tokens', { body: { name: 'fuzz idp', mfa_code: await ws.nextMfa() } });
  const spareScim = await ok('POST', '/v1/scim/tokens', { body: { name: 'fuzz spare', mfa_code: await ws.nextMfa() } });
  const scimHeaders = { 'content-type': 'application/scim+json' };
  const scimUser = await ok('POST', '/v1/scim/Users', {
    key: scimToken.token,
    headers: scimHeaders,
    body: {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'fuzz-member-scim@example.com',
      emails: [{ value: 'fuzz-member-scim@example.com', primary: true }],
      active: true,
    },
  });
  const scimGroup = await ok('POST', '/v1/scim/Groups', {
    key: scimToken.token,
    headers: scimHeaders,
    body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Fuzzers' },
  });

  // API keys the fuzzer may revoke, rotate and edit: never the one it calls with.
  const spareKeys = await Promise.all(
    [0, 1, 2].map((i) => ws.mintKey({ name: `fuzz spare ${i}`, key_type: 'restricted', scopes: ['transfers:read'] })),
  );
  const gdprExport = await ok('POST', '/v1/gdpr/exports', { body: { user_id: ws.user_id } });
  const legal = await ok('GET', '/v1/legal/documents');

  const transferIds = [active.transfer.id, pending.transfer.id];
  const pools: Record<string, string[]> = {
    '/v1/transfers/{id}': transferIds,
    '/v1/api-keys/{id}': spareKeys.map((k) => k.id),
    '/v1/webhooks/{id}': [hook.id],
    '/v1/webhooks/{id}/deliveries/{deliveryId}': (deliveries.data ?? []).map((d: { id: string }) => d.id),
    '/v1/rules/{id}': [rule.id],
    '/v1/recipients/{id}': [recipient.id],
    '/v1/collections/{id}': [collection.id],
    '/v1/collections/{id}/transfers/{transferId}': transferIds,
    '/v1/shared-collections/{code}': collection.share_url ? [lastSegment(collection.share_url)] : [],
    '/v1/intakes/{id}': [intake.id],
    '/v1/intakes/{id}/documents/{docId}': [submission.document.id],
    '/v1/intakes/{id}/publishable-keys/{keyId}': [spareKey.id],
    '/v1/coffres/{id}': [vault.id],
    '/v1/coffres/{id}/items/{itemId}': [item.item.id],
    '/v1/coffres/{id}/members/{memberId}': [member.id],
    '/v1/coffre-access/{token}': member.invitation_url ? [lastSegment(member.invitation_url)] : [],
    '/v1/coffre-access/{token}/items/{itemId}': [item.item.id],
    '/v1/mcp/tokens/{id}': [spareMcp.id],
    '/v1/mcp/hosted/{workspaceId}': [ws.workspace_id],
    '/v1/scim/tokens/{id}': [spareScim.id],
    '/v1/scim/Users/{id}': [scimUser.id],
    '/v1/scim/Groups/{id}': [scimGroup.id],
    '/v1/scim/Schemas/{id}': [
      'urn:ietf:params:scim:schemas:core:2.0:User',
      'urn:ietf:params:scim:schemas:core:2.0:Group',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
    ],
    '/v1/scim/ResourceTypes/{id}': ['User', 'Group'],
    '/v1/gdpr/exports/{id}': [gdprExport.id],
    '/v1/legal/documents/{slug}': (legal.data ?? []).map((d: { slug: string }) => d.slug),
    '/v1/shares/{code}': [code, pending.transfer.short_code],
    '/v1/uploads/{token}': [
      ...[...active.upload_urls, ...pending.upload_urls, ...submission.upload_urls].map((u) => lastSegment(u.url)),
      lastSegment(item.upload_url.url),
    ],
    '/v1/downloads/{token}': (downloadLinks.files ?? []).map((f: { download_url: string }) =>
      lastSegment(f.download_url),
    ),
    '/v1/archives/{token}': [lastSegment(archiveLink.archive_url)],
  };
  const pagePools: Record<string, string[]> = {
    '/t/{code}': [code],
    '/c/{code}': pools['/v1/shared-collections/{code}'] ?? [],
    '/c/{code}/archive': pools['/v1/shared-collections/{code}'] ?? [],
    '/i/{id}': [intake.id],
    '/v/{token}': pools['/v1/coffre-access/{token}'] ?? [],
    '/docs/{path*}': ['', 'index.html', 'api', 'guides/transfers'],
    '/assets/{path*}': ['share.js', 'style.css'],
    '/v1/mcp/hosted/{workspaceId}/transport': [ws.workspace_id],
  };
  const secrets: Record<Credential, string | undefined> = {
    apiKey: key,
    scimToken: scimToken.token,
    mcpToken: mcpToken.token,
    publishableKey: intake.publishable_key.key,
    none: undefined,
  };
  // Ids a body may name (`folder_id`, `transfer_ids`, the `id` of PATCH /v1/webhooks, `user_id`).
  const bodyIds = [...new Set([...Object.values(pools).flat(), folder.id, ws.user_id])];
  return { secrets, pools, pagePools, bodyIds };
}

// ---------------------------------------------------------------------------
// Requests.

type FuzzRequest = {
  method: string;
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
};

const MFA_SENTINEL = '__VALID_MFA_CODE__';

/** encodeURIComponent that survives lone surrogates (sent as the bytes of their UTF-8 form) and keeps `.`/`..` a segment. */
function encodeSegment(value: string): string {
  if (value === '.' || value === '..') return value.replaceAll('.', '%2E');
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    out +=
      code >= 0xd800 && code <= 0xdfff
        ? `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase()
        : encodeURIComponent(char);
  }
  return out;
}

/**
 * A JSON value as a parameter's text (arrays are repeated parameters, see queryOf), at most 600
 * characters: encoded, a URL of such values stays within the 16 KiB of headers Node reads (beyond,
 * the server answers 431 before any route: test/fuzz.test.ts fuzzes that).
 */
const textOf = (value: unknown): string =>
  [...(typeof value === 'string' ? value : value === undefined ? '' : (JSON.stringify(value) ?? ''))]
    .slice(0, 600)
    .join('');

/** Header values as fetch sends them: latin1, no control characters, of a size Node's parser reads. */
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e\xa0-\xff]/g, '?').slice(0, 4_000);

/**
 * A request is drawn `valid` (every part as the document says, the credential its scheme names: what
 * reaches the handlers and the response schemas) or `hostile` (any part hostile, now and then the wrong
 * credential or a parameter the operation does not declare), half and half.
 */
type Mode = 'valid' | 'hostile';

/** A parameter's value: valid by its schema, or (hostile mode) hostile one time in two. */
function parameterValue(schema: JsonSchema | undefined, mode: Mode): fc.Arbitrary<unknown> {
  const published = schema ?? true;
  const options = { root: world.document };
  return mode === 'valid'
    ? valid(published, options)
    : fc.oneof(valid(published, options), hostile(published, options));
}

function pathValue(target: Target, parameter: Parameter, mode: Mode): fc.Arbitrary<string> {
  const prefix = target.path.slice(0, target.path.indexOf(`{${parameter.name}}`) + parameter.name.length + 2);
  const real = world.pools[prefix] ?? [];
  const drawn = parameterValue(parameter.schema, mode).map(textOf);
  return (
    real.length > 0
      ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...real) }, { weight: 3, arbitrary: drawn })
      : drawn
  ).map((value) => (value === '' ? 'x' : value));
}

function queryOf(values: Record<string, unknown>, extra: [string, string] | null): string {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(values)) {
    if (Array.isArray(value)) for (const item of value.slice(0, 50)) pairs.push([name, textOf(item)]);
    else pairs.push([name, textOf(value)]);
  }
  if (extra) pairs.push(extra);
  // Within 6,000 characters once encoded (see textOf): the last parameters are left out beyond.
  let query = '';
  for (const [k, v] of pairs) {
    const pair = `${encodeSegment(k)}=${encodeSegment(v)}`;
    if (query.length + pair.length > 6_000) break;
    query = query ? `${query}&${pair}` : pair;
  }
  return query;
}

const isJsonType = (type: string) => /^application\/(?:[\w.-]+\+)?json$/.test(type);

/** A request body of one of the operation's media types: JSON valid or hostile, or bytes. */
function bodyOf(target: Target, mode: Mode): fc.Arbitrary<{ type: string; body: string | Uint8Array } | undefined> {
  const requestBody = target.operation.requestBody;
  // An operation without a body gets none (test/fuzz.test.ts sends stray and malformed bodies to every route).
  if (!requestBody) return fc.constant(undefined);
  const variants = Object.entries(requestBody.content).map(([type, media]) => {
    const schema = media.schema ?? true;
    if (isJsonType(type)) {
      const value =
        mode === 'valid'
          ? // Few optional members: each is one more way to a 400 the schema cannot say (a password of runs).
            valid(schema, { root: world.document, omitOptional: 2 })
          : fc.oneof(
              { weight: 1, arbitrary: valid(schema, { root: world.document }) },
              { weight: 3, arbitrary: hostile(schema, { root: world.document }) },
            );
      return fc.tuple(value, fc.boolean(), fc.boolean(), fc.nat()).map(([drawn, realMfa, realIds, pick]) => {
        let v = realIds ? withRealIds(drawn, pick) : drawn;
        if (realMfa && v !== null && typeof v === 'object' && !Array.isArray(v) && 'mfa_code' in v) {
          v = { ...v, mfa_code: MFA_SENTINEL };
        }
        return { type, body: JSON.stringify(v) ?? 'null' };
      });
    }
    return fc
      .oneof(
        fc.uint8Array({ maxLength: 64 }),
        fc.constantFrom(...HOSTILE_STRINGS).map((s) => new TextEncoder().encode(s)),
      )
      .map((bytes) => ({ type, body: bytes as string | Uint8Array }));
  });
  const drawn = fc.oneof(...variants);
  return requestBody.required || mode === 'valid'
    ? drawn
    : fc.oneof({ weight: 5, arbitrary: drawn }, { weight: 1, arbitrary: fc.constant(undefined) });
}

/** The value with each string member named like an id (`id`, `folder_id`, `transfer_ids`) replaced by a real one. */
function withRealIds(value: unknown, pick: number, name = '', depth = 0): unknown {
  const ids = world.bodyIds;
  if (typeof value === 'string' && /(^|_)ids?$/.test(name)) return ids[pick % ids.length];
  // Ids sit near the top of a body; the very deep values hostile() draws are left as they are.
  if (depth > 8) return value;
  if (Array.isArray(value)) return value.map((item, i) => withRealIds(item, pick + i, name, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [key, withRealIds(member, pick, key, depth + 1)]),
    );
  }
  return value;
}

function authorizationOf(target: Target, mode: Mode): fc.Arbitrary<string | undefined> {
  const bearer = (credential: Credential) => {
    const secret = world.secrets[credential];
    return secret === undefined ? undefined : `Bearer ${secret}`;
  };
  if (mode === 'valid') return fc.constantFrom(...target.credentials).map(bearer);
  const others = (Object.keys(world.secrets) as Credential[]).filter((c) => !target.credentials.includes(c));
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...target.credentials).map(bearer) },
    { weight: 1, arbitrary: fc.constantFrom(...others).map(bearer) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer svc_live_0000000000000000000000000000000000000000',
        'Basic Zm9vOmJhcg==',
        'Bearer cip_live_x',
        'Bearer scim_x',
      ),
    },
  );
}

/** The requests of one operation: its parameters and body drawn from the document, valid or hostile. */
function requestsOf(target: Target): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(requestOf(target, 'valid'), requestOf(target, 'hostile'));
}

function requestOf(target: Target, mode: Mode): fc.Arbitrary<FuzzRequest> {
  const byPlace = (place: string) => target.parameters.filter((p) => p.in === place);
  // Required parameters always; optional ones one time in three when valid (each is one more way to
  // a 400: a cursor drawn from its schema is no cursor of ours), one in two when hostile.
  const optionalRecord = (parameters: Parameter[], value: (p: Parameter) => fc.Arbitrary<unknown>) =>
    fc
      .record(
        Object.fromEntries(
          parameters.map((p) => [
            p.name,
            p.required
              ? value(p)
              : fc.oneof(
                  { weight: mode === 'valid' ? 2 : 1, arbitrary: fc.constant(undefined) },
                  { weight: 1, arbitrary: value(p) },
                ),
          ]),
        ),
      )
      .map((values) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)));
  const pathParameters = byPlace('path');
  return fc
    .record({
      path: fc.tuple(...pathParameters.map((p) => pathValue(target, p, mode))),
      query: optionalRecord(byPlace('query'), (p) => parameterValue(p.schema, mode)),
      // Now and then (hostile mode) a parameter the operation does not declare.
      unknownQuery:
        mode === 'valid'
          ? fc.constant(null)
          : fc.oneof(
              { weight: 3, arbitrary: fc.constant(null) },
              {
                weight: 1,
                arbitrary: fc.tuple(
                  fc.constantFrom(...HOSTILE_STRINGS, 'limit', 'cursor'),
                  fc.constantFrom(...HOSTILE_STRINGS),
                ),
              },
            ),
      headers: optionalRecord(byPlace('header'), (p) => parameterValue(p.schema, mode).map(textOf)),
      authorization: authorizationOf(target, mode),
      body: bodyOf(target, mode),
    })
    .map((drawn) => {
      let index = 0;
      const resolvedPath = target.path.replace(/\{\w+\}/g, () => encodeSegment(drawn.path[index++] ?? 'x'));
      const query = queryOf(drawn.query, drawn.unknownQuery);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(drawn.headers)) headers[name] = headerSafe(String(value));
      if (drawn.authorization !== undefined) headers.authorization = drawn.authorization;
      if (drawn.body) headers['content-type'] = drawn.body.type;
      const request: FuzzRequest = {
        method: target.method,
        url: query ? `${resolvedPath}?${query}` : resolvedPath,
        headers,
        body: drawn.body?.body,
      };
      // Counterexamples print as the request they are, not as its drawn parts.
      Object.defineProperty(request, fc.toStringMethod, { value: () => `${target.method} ${request.url}` });
      return request;
    });
}

async function send(request: FuzzRequest): Promise<ApiResponse> {
  // A verification code not used yet when one is at hand (two per 30 s step), else the current one, refused as used.
  const body =
    typeof request.body === 'string' && request.body.includes(MFA_SENTINEL)
      ? request.body.replaceAll(MFA_SENTINEL, world.ws.tryMfa() ?? totpCode(world.ws.mfa_secret, Date.now()))
      : request.body;
  const response = await fetch(world.api.url + request.url, {
    method: request.method,
    headers: request.headers,
    ...(body === undefined || request.method === 'GET' || request.method === 'HEAD' ? {} : { body }),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** The exchange the server recorded for a request id, once its answer has gone out. */
function seenFor(requestId: string): Promise<Seen | undefined> {
  const entry = world.seen.get(requestId);
  if (entry) {
    world.seen.delete(requestId);
    return Promise.resolve(entry);
  }
  return new Promise((resolve) => {
    world.waiting.set(requestId, resolve);
    setTimeout(() => {
      if (world.waiting.delete(requestId)) resolve(undefined);
    }, 5_000);
  });
}

function reproducer(request: FuzzRequest): string {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const shorten = (s: string) => (s.length > 600 ? `${s.slice(0, 300)}…(${s.length} chars)…${s.slice(-100)}` : s);
  const parts = [`curl -i -X ${request.method} ${quote(world.api.url + shorten(request.url))}`];
  for (const [name, value] of Object.entries(request.headers)) parts.push(`-H ${quote(`${name}: ${shorten(value)}`)}`);
  if (typeof request.body === 'string') parts.push(`--data-binary ${quote(shorten(request.body))}`);
  else if (request.body) parts.push(`--data-binary <${request.body.length} bytes>`);
  return parts.join(' ');
}

/** What is wrong with one answer of an operation, [] when it honours the property. */
async function problemsOf(target: Target, request: FuzzRequest, response: ApiResponse): Promise<string[]> {
  const { status } = response;
  const requestId = response.headers.get('x-request-id');
  const health = target.key === 'GET /v1/health' && status === 503;
  if (status >= 500 && !health) return [`status ${status}`];
  if (!requestId) return ['no X-Request-Id header'];
  const problems: string[] = [];
  const seen = await seenFor(requestId);
  const logged = world.serverErrors.get(requestId);
  world.serverErrors.delete(requestId);
  if (STRICT_LOGS && logged) problems.push(`answered ${status} but the server logged an error: ${logged}`);
  if (!seen) return [...problems, 'the server recorded no exchange for this request'];
  const own =
    seen.route.path === target.path &&
    seen.route.method.toUpperCase() === (target.method === 'HEAD' ? 'GET' : target.method);
  if (status >= 400 && request.method !== 'HEAD') {
    // SCIM's error on its protocol's paths: the operation's, or the path the server resolved (`tokens/%2E%2E` is /v1/scim/).
    const scim = own ? target.credentials.includes('scimToken') : isScimProtocolPath(seen.exchange?.path ?? '');
    // A status the operation documents with a body of its own (not a shared error) is held to its schema below.
    const documented = own ? target.operation.responses[String(status)] : undefined;
    const ownBody = documented !== undefined && documented.$ref === undefined;
    const problem = scim ? scimErrorProblem(response) : ownBody ? null : envelopeProblem(response);
    if (problem) problems.push(problem);
  }
  // The answer held to the document: the operation's, or the one a hostile path parameter led to
  // (`events` as a webhook id); a path no route has (hapi's 404) is no operation of it.
  const documentedRoute = own || (seen.route.path !== '/{p*}' && seen.route.settings.tags?.includes('api'));
  if (documentedRoute && seen.exchange) problems.push(...world.validator.check(seen.exchange, { request: false }));
  return problems;
}

async function fuzz<T>(
  t: ExecutionContext,
  name: string,
  runs: number,
  arbitrary: fc.Arbitrary<T>,
  run: (value: T, findings: Map<string, string>) => Promise<number>,
) {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
  const findings = new Map<string, string>();
  const statuses: Record<string, number> = {};
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      const status = await run(value, findings);
      cases += 1;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }),
    { numRuns: runs, seed, includeErrorInReport: true, endOnFailure: true },
  );
  counts[name] = { cases, statuses };
  t.log(`${name}: ${cases} cases, seed ${seed}, statuses ${JSON.stringify(statuses)}`);
  if (findings.size > 0) t.fail(`${findings.size} distinct violations:\n${[...findings.values()].join('\n\n')}`);
  else t.pass();
}

/** One finding per distinct (problem, status) of an operation, ids and request ids left out. */
function record(findings: Map<string, string>, problems: string[], request: FuzzRequest, response: ApiResponse) {
  for (const problem of problems) {
    const signature = `${problem.replace(/req_\S+|[0-9a-f]{8}-[0-9a-f-]{27}|\d+/g, '…')} | ${response.status}`;
    if (findings.has(signature)) continue;
    // Binary answers (an archive, a file) shown as dots.
    const answer = response.text.slice(0, 400).replace(/[^\x20-\x7e\u00a0-\uffef]/g, '.');
    findings.set(signature, `${problem}\n    ${reproducer(request)}\n    -> ${response.status} ${answer}`);
  }
}

// ---------------------------------------------------------------------------
// The public pages: no 5xx, an X-Request-Id, whatever the path, query or form.

const PAGE_ROUTES = [
  'GET /',
  'GET /send',
  'GET /t/{code}',
  'POST /t/{code}',
  'GET /c/{code}',
  'POST /c/{code}',
  'POST /c/{code}/archive',
  'GET /i/{id}',
  'GET /v/{token}',
  'GET /docs/{path*}',
  'GET /assets/{path*}',
  'GET /v1/openapi.json',
  // The MCP transport's 405s to a stream or a session (a protocol's answer, not an operation of the document).
  'GET /v1/mcp/hosted/{workspaceId}/transport',
  'DELETE /v1/mcp/hosted/{workspaceId}/transport',
];

test.serial('the public pages list matches the pages the server serves', (t) => {
  const served = world.api.server
    .table()
    .filter((route) => !route.settings.tags?.includes('api'))
    .map((route) => `${route.method.toUpperCase()} ${route.path}`);
  t.deepEqual(
    served.filter((key) => !PAGE_ROUTES.includes(key)),
    [],
    'a page the server serves is not fuzzed: add it to PAGE_ROUTES',
  );
});

for (const page of PAGE_ROUTES) {
  if (ONLY && !`PAGE ${page}`.includes(ONLY)) continue;
  test.serial(`PAGE ${page}`, async (t) => {
    const [method = 'GET', pagePath = '/'] = page.split(' ');
    const real = world.pagePools[pagePath] ?? [];
    const segment = fc.oneof(
      ...(real.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...real) }] : []),
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map(encodeSegment) },
      { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map(encodeSegment) },
      // Raw traversal, kept as sent (fetch resolves `..` before sending, encoded ones it keeps).
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
          '..%2F..%2F',
          '%00',
          '%ZZ',
          '%C0%AF',
          'a/b/../../c',
          'x'.repeat(3_000),
        ),
      },
    );
    const requests = fc
      .record({
        segment,
        query: fc.option(
          fc.tuple(
            fc.constantFrom('password', 'lang', 'file', 'q', '__proto__', 'x'),
            fc.constantFrom(...HOSTILE_STRINGS),
          ),
          { freq: 2 },
        ),
        form: fc.oneof(
          fc.constantFrom('', 'password=', 'password=%00', 'password=a&password=b', '%ZZ=1', '=', 'file_id=..%2F'),
          fc.constantFrom(...HOSTILE_STRINGS).map((s) => `password=${encodeSegment(s)}`),
        ),
      })
      .map(({ segment, query, form }): FuzzRequest => {
        const url = pagePath.replace(/\{\w+\*?\}/, segment);
        const search = query ? `?${encodeSegment(query[0])}=${encodeSegment(query[1])}` : '';
        const headers: Record<string, string> = {};
        if (method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
        if (pagePath.startsWith('/v1/mcp/')) headers.authorization = `Bearer ${world.secrets.mcpToken}`;
        return { method, url: `${url}${search}`, headers, ...(method === 'POST' ? { body: form } : {}) };
      });
    await fuzz(t, `PAGE ${page}`, CASES_PER_PAGE, requests, async (request, findings) => {
      const response = await send(request);
      const problems: string[] = [];
      if (response.status >= 500) problems.push(`status ${response.status}`);
      if (!response.headers.get('x-request-id')) problems.push('no X-Request-Id header');
      record(findings, problems, request, response);
      return response.status;
    });
  });
}

// ---------------------------------------------------------------------------
// The operations.

test.serial('the document has operations, every one of them fuzzed or exempt with a reason', (t) => {
  const targets = targetsOf(world.document);
  t.true(targets.length >= 100, `only ${targets.length} operations`);
  for (const key of Object.keys(EXEMPT))
    t.true(
      targets.some((target) => target.key === key),
      `stale exemption: ${key}`,
    );
  t.log(`${targets.length} operations, ${Object.keys(EXEMPT).length} exempt`);
});

// One test per operation, declared as this file loads: from the document the routes build in
// process (sdk/scripts/openapi-document.ts, the generator GET /v1/openapi.json runs, with no stack).
// The served document must list the same operations (checked below); each test fuzzes the served one.
const declared = await declaredOperations();

for (const [phase, keys] of declared.entries()) {
  for (const key of keys) {
    if (ONLY && !key.includes(ONLY)) continue;
    test.serial(`${key} (phase ${phase})`, async (t) => {
      const target = targetsOf(world.document).find((candidate) => candidate.key === key);
      if (!target) return t.fail(`${key} is not an operation of the served document`);
      if (EXEMPT[key]) return t.pass();
      await fuzz(t, key, CASES_PER_OPERATION, requestsOf(target), async (request, findings) => {
        const response = await send(request);
        if (VERBOSE)
          t.log(`${request.method} ${request.url.slice(0, 200)} -> ${response.status} ${response.text.slice(0, 200)}`);
        record(findings, await problemsOf(target, request, response), request, response);
        return response.status;
      });
    });
  }
}

async function declaredOperations(): Promise<string[][]> {
  const { loadOpenApiDocument } = await import('../sdk/scripts/openapi-document.ts');
  const document = (await loadOpenApiDocument()) as unknown as Document;
  const targets = targetsOf(document);
  return [0, 1, 2].map((phase) => {
    const inPhase = targets.filter((target) => phaseOf(target) === phase);
    return (phase === 2 ? inPhase.sort(ending) : inPhase).map((target) => target.key);
  });
}

test.serial('every operation of the served document was declared above', (t) => {
  const served = targetsOf(world.document).map((target) => target.key);
  const fuzzed = new Set(declared.flat());
  t.deepEqual(
    served.filter((key) => !fuzzed.has(key)),
    [],
  );
});
