import type { ResponseObject } from '@hapi/hapi';

// Headers every page and asset of the web UI carries. Scripts, styles and
// workers come only from this origin (no inline code, no CDN); `connect-src`
// also allows the public base URL because upload and download links are built
// from it and may name another origin than the page's (a proxy in front).

export function pagePolicy(publicBaseUrl: string): string {
  const api = new URL(publicBaseUrl).origin;
  return [
    "default-src 'self'",
    `connect-src 'self' ${api}`,
    "img-src 'self' data:",
    "worker-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
}

export function secureHtml(response: ResponseObject, publicBaseUrl: string): ResponseObject {
  return response
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', pagePolicy(publicBaseUrl))
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content and quoted attribute values. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
