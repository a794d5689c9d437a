import type { ByteRange } from '../../lib/transfers/download-links.ts';
import type { ChunkRange } from '../../lib/uploads/receive.ts';

// The two Range headers the API reads: a download's `Range` (RFC 9110) and an
// upload's `Content-Range`, which says which bytes of the file a PUT carries.

/**
 * Parses a Range header for one range (`bytes=a-b`, `bytes=a-`, `bytes=-n`).
 * Returns null for a header we do not honour (absent, multiple ranges, other
 * units): the full content is sent, as RFC 9110 allows. Returns
 * 'unsatisfiable' for a well-formed range outside the content (416).
 */
export function parseRangeHeader(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== '' && Number(last) < start)) return 'unsatisfiable';
  return { start, end };
}

/**
 * Parses an upload's `Content-Range: bytes a-b/n` into bytes `a` to `b + 1` (exclusive) of `n`;
 * `unreadable` when it does not read so. Whether those bytes may be sent now is the upload's rule
 * (lib/uploads/receive.ts).
 */
export function parseContentRange(header: string): ChunkRange | 'unreadable' {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header.trim());
  if (!match) return 'unreadable';
  return { start: Number(match[1]), end: Number(match[2]) + 1, total: Number(match[3]) };
}
