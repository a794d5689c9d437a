import type { ResponseObject } from '@hapi/hapi';

// Headers every page and asset of the web UI carries. Scripts, styles and
// workers come only from this origin (no inline code, no CDN); `connect-src`
// also allows the public base URL because upload and download links are built
// from it and may name another origin than the page's (a proxy in front). The
// one inline script allowed is a page's import map, by its hash: Chromium
// loads no external import map.

export function pagePolicy(
  publicBaseUrl: string,
  scriptHashes: readonly string[] = [],
  extraDirectives: readonly string[] = [],
): string {
  const api = new URL(publicBaseUrl).origin;
  return [
    "default-src 'self'",
    ...extraDirectives,
    ...(scriptHashes.length > 0 ? [`script-src 'self' ${scriptHashes.map((hash) => `'${hash}'`).join(' ')}`] : []),
    `connect-src 'self' ${api}`,
    "img-src 'self' data:",
    "worker-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
}

export function secureHtml(
  response: ResponseObject,
  publicBaseUrl: string,
  scriptHashes: readonly string[] = [],
  extraDirectives: readonly string[] = [],
): ResponseObject {
  return response
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', pagePolicy(publicBaseUrl, scriptHashes, extraDirectives))
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content and quoted attribute values. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
