/** A single byte range (inclusive) resolved against a size. */
export type ByteRange = { start: number; end: number };

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

/** Content-Disposition for any file name: an ASCII fallback plus the exact UTF-8 name (RFC 6266 / 8187). */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'download';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
