import { createHash } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { type ChainLinkRow, createAuditQueries } from '../db/queries/audit.ts';
import type { Tenant } from '../tenancy.ts';

// The audit log's hash chain (docs/audit.md, "Integrity"). The database writes the links
// (migration 0031's trigger) and recomputes them when verifying; this module walks a chain and
// names its first broken link, and mirrors the serialisation for offline verification of an export.

/** What went wrong at the first broken link. */
export const BROKEN_LINK_REASONS = ['edited', 'missing', 'reordered'] as const;
export type BrokenLinkReason = (typeof BROKEN_LINK_REASONS)[number];

export type BrokenLink = { id: string; seq: number; reason: BrokenLinkReason; detail: string };
export type ChainPoint = { seq: number; hash: string };

export type ChainVerification = {
  valid: boolean;
  entries_checked: number;
  /** Where verification started: the last entry a retention purge removed (seq 0 before any). */
  anchor: ChainPoint;
  /** The last entry checked and found sound; null when none was. */
  head: ChainPoint | null;
  first_broken: BrokenLink | null;
};

/** The metadata keys holding personal data; migration 0031's audit_personal_metadata_keys() names the same. */
export const AUDIT_PERSONAL_METADATA_KEYS = ['email', 'recipient_email', 'ip_address', 'user_agent'] as const;
/** The running counters of a collapsed entry, outside the hash (audit_collapse_counter_keys()). */
const COLLAPSE_COUNTER_KEYS = ['count', 'last_at', 'last_request_id'];

const GENESIS_HASH = '0'.repeat(64);
const DEFAULT_BATCH = 1000;

/** Walks the tenant's chain from its anchor, a batch at a time, and stops at the first broken link. */
export async function verifyAuditChain(
  db: CommonQueryMethods,
  tenant: Tenant,
  batchSize = DEFAULT_BATCH,
): Promise<ChainVerification> {
  const queries = createAuditQueries(db);
  const anchorRow = await queries.anchor(tenant);
  const anchor = { seq: anchorRow?.anchor_seq ?? 0, hash: anchorRow?.anchor_hash ?? GENESIS_HASH };
  let expected = { seq: anchor.seq + 1, prevHash: anchor.hash, notBefore: anchorRow?.anchor_created_at ?? null };
  let head: ChainPoint | null = null;
  let checked = 0;

  const links = chainLinks(queries, tenant, anchor.seq, batchSize)[Symbol.asyncIterator]();
  let current = await links.next();
  while (!current.done) {
    const link = current.value;
    const following = await links.next();
    const broken = judgeLink(link, following.done ? undefined : following.value, expected);
    if (broken) return { valid: false, entries_checked: checked, anchor, head, first_broken: broken };
    checked += 1;
    head = { seq: link.seq, hash: link.entry_hash };
    expected = { seq: link.seq + 1, prevHash: link.entry_hash, notBefore: link.created_at };
    current = following;
  }
  return { valid: true, entries_checked: checked, anchor, head, first_broken: null };
}

async function* chainLinks(
  queries: ReturnType<typeof createAuditQueries>,
  tenant: Tenant,
  afterSeq: number,
  batchSize: number,
): AsyncGenerator<ChainLinkRow> {
  let after = afterSeq;
  for (;;) {
    const batch = await queries.chainLinks(tenant, after, batchSize);
    yield* batch;
    const last = batch.at(-1);
    if (!last || batch.length < batchSize) return;
    after = last.seq;
  }
}

/**
 * What is wrong with one link, given what the link before it leads to expect and the link after
 * it (a swapped pair shows in both). Order matters: a reordered pair also fails its hashes, and is
 * reported as reordered; a gap is reported on the first entry after it (the missing one is gone).
 */
function judgeLink(
  link: ChainLinkRow,
  following: ChainLinkRow | undefined,
  expected: { seq: number; prevHash: string; notBefore: Date | null },
): BrokenLink | null {
  const at = { id: link.id, seq: link.seq };
  if (link.seq !== expected.seq || link.prev_hash !== expected.prevHash) {
    if (following && link.prev_hash === following.entry_hash) {
      return { ...at, reason: 'reordered', detail: `Linked after entry ${following.seq}, which follows it.` };
    }
    if (link.seq > expected.seq) {
      const gap = link.seq - 1 === expected.seq ? `${expected.seq}` : `${expected.seq} to ${link.seq - 1}`;
      return { ...at, reason: 'missing', detail: `Entry ${gap} before it is missing.` };
    }
    return { ...at, reason: 'missing', detail: 'Its prev_hash is not the hash of the entry before it.' };
  }
  if (
    (following && following.created_at < link.created_at) ||
    (expected.notBefore && link.created_at < expected.notBefore)
  ) {
    return { ...at, reason: 'reordered', detail: 'Dated out of chain order.' };
  }
  if (!link.hash_matches || !link.personal_matches) {
    return { ...at, reason: 'edited', detail: 'Its content no longer gives its entry_hash.' };
  }
  return null;
}

/**
 * An exported entry's `entry_hash`, recomputed from its fields without the database: the offline
 * check of an export (docs/audit.md, "Verifying an export"). The serialisation is PostgreSQL's
 * jsonb text of the array migration 0031 hashes.
 */
export function exportedEntryHash(entry: ExportedEntryJson): string {
  const metadata = omit(entry.metadata, [
    ...AUDIT_PERSONAL_METADATA_KEYS,
    ...(entry.collapsed ? COLLAPSE_COUNTER_KEYS : []),
  ]);
  return sha256Hex(
    jsonbText([
      'valise-audit/1',
      entry.seq,
      entry.prev_hash,
      entry.id,
      entry.workspace_id,
      entry.environment,
      entry.actor_id,
      entry.api_key_id,
      entry.action,
      entry.resource_type,
      entry.resource_id,
      entry.status,
      entry.request_id,
      entry.created_at,
      entry.collapsed,
      metadata,
      entry.personal_digest,
    ]),
  );
}

/** An exported entry's personal digest, recomputed: only meaningful for an entry not erased. */
export function exportedPersonalDigest(entry: ExportedEntryJson): string {
  const personal = pick(entry.metadata, AUDIT_PERSONAL_METADATA_KEYS);
  return sha256Hex(
    jsonbText(['valise-audit-personal/1', entry.ip_address, entry.user_agent, entry.country_code, personal]),
  );
}

/** An entry as an NDJSON export line parses (docs/audit.md, "Export"). */
export type ExportedEntryJson = {
  object: 'audit_entry';
  id: string;
  seq: number;
  created_at: string;
  workspace_id: string;
  environment: string;
  actor_id: string | null;
  api_key_id: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  status: string;
  request_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
  country_code: string | null;
  metadata: Record<string, unknown>;
  collapsed: boolean;
  erased_at: string | null;
  personal_digest: string;
  prev_hash: string;
  entry_hash: string;
};

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function omit(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
}

function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => keys.includes(key)));
}

/**
 * PostgreSQL's text form of a jsonb value: `, ` between items, `: ` after keys, object keys
 * shortest first then by their UTF-8 bytes. Strings escape as JSON.stringify does.
 */
export function jsonbText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => compareJsonbKeys(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${jsonbText(item)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

function compareJsonbKeys(a: string, b: string): number {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length - right.length || Buffer.compare(left, right);
}
