import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { newRequestId } from '../request-id.ts';

// Every request gets an id (returned as X-Request-Id and in error bodies), and
// routes answer under both /v1/... and /...: the unprefixed form is rewritten
// here so each route is declared once. Pages and their assets (the share pages
// /t/… and /c/…, the intake page /i/…, the vault page /v/…, the sender page /send, /assets/…, the documentation
// /docs/…) are not API routes.
const isPage = (path: string) =>
  path.startsWith('/t/') ||
  path.startsWith('/c/') ||
  path.startsWith('/i/') ||
  path.startsWith('/v/') ||
  path === '/send' ||
  path === '/docs' ||
  path.startsWith('/docs/') ||
  path.startsWith('/assets/');

export function onRequest(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
  request.app.requestId = newRequestId();
  const path = request.path;
  if (path !== '/v1' && !path.startsWith('/v1/') && !isPage(path)) {
    request.setUrl(`/v1${path === '/' ? '' : path}${request.url.search}`);
  }
  return h.continue;
}
