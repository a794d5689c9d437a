import { createHash } from 'node:crypto';
import { constantTimeEqual, hmacSha256 } from './crypto/secrets.ts';
import { DomainError } from './errors.ts';

// Keyset pagination, newest first, on (created_at, id): pages stay stable
// while rows are inserted. A cursor is signed and names its list and the hash
// of its filters, so it cannot be forged or replayed against another list.

export type Position = { createdAt: Date; id: string };

export type PageQuery = {
  limit: number;
  cursor?: string | undefined;
  offset?: number | undefined;
};

export type PageWindow = {
  /** Rows strictly older than this position, or from the top when null. */
  after: Position | null;
  offset: number;
  /** How many rows to fetch: one more than the page, to learn has_more. */
  fetch: number;
};

export type ListEnvelope<T> = {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  limit: number;
  offset: number | null;
};

type CursorBody = { l: string; f: string; t: string; i: string };

export class Paginator {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    this.key = key;
  }

  open(list: string, filters: Record<string, unknown>, query: PageQuery): PageWindow {
    if (query.cursor !== undefined && query.offset !== undefined && query.offset > 0) {
      throw new DomainError('validation_error', 'Send either `cursor` or `offset`, not both.', { param: 'offset' });
    }
    const fetch = query.limit + 1;
    if (query.cursor === undefined) return { after: null, offset: query.offset ?? 0, fetch };
    const body = this.decode(query.cursor);
    if (body.l !== list || body.f !== filterHash(filters)) {
      throw new DomainError('validation_error', 'This cursor belongs to another list or another set of filters.', {
        param: 'cursor',
      });
    }
    return { after: { createdAt: new Date(body.t), id: body.i }, offset: 0, fetch };
  }

  close<Row extends { created_at: Date; id: string }, Out>(
    list: string,
    filters: Record<string, unknown>,
    query: PageQuery,
    rows: readonly Row[],
    present: (row: Row) => Out,
  ): ListEnvelope<Out> {
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    const last = page.at(-1);
    return {
      object: 'list',
      data: page.map(present),
      has_more: hasMore,
      next_cursor:
        hasMore && last
          ? this.encode({ l: list, f: filterHash(filters), t: last.created_at.toISOString(), i: last.id })
          : null,
      limit: query.limit,
      offset: query.cursor === undefined ? (query.offset ?? 0) : null,
    };
  }

  private encode(body: CursorBody): string {
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${payload}.${hmacSha256(this.key, payload).subarray(0, 16).toString('base64url')}`;
  }

  private decode(cursor: string): CursorBody {
    const invalid = () => new DomainError('validation_error', 'The cursor is not valid.', { param: 'cursor' });
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) throw invalid();
    const expected = hmacSha256(this.key, payload).subarray(0, 16);
    if (!constantTimeEqual(expected, Buffer.from(signature, 'base64url'))) throw invalid();
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorBody;
    if (Number.isNaN(Date.parse(body.t))) throw invalid();
    return body;
  }
}

function filterHash(filters: Record<string, unknown>): string {
  const canonical = Object.keys(filters)
    .sort()
    .filter((k) => filters[k] !== undefined && filters[k] !== null)
    .map((k) => [k, filters[k]]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 16);
}
