import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { DomainError } from '../../lib/errors.ts';
import { servedOverTls } from '../client-ip.ts';
import { deprecationOf, markDeprecated } from '../deprecation.ts';
import { isScimProtocolPath, renderError, renderScimError } from '../errors.ts';
import { routeSettings } from '../types.ts';
import { API_REVISION } from '../version.ts';
import { auditRequest } from './audit.ts';
import { completeIdempotency } from './idempotency.ts';
import { auditScimRequest } from './scim-audit.ts';

// The last step of every request, in order: render errors as the envelope,
// settle the idempotency record, write the audit entry, add shared headers.

/** HSTS on every response the client received over TLS (a year, subdomains included); never over plain HTTP. */
const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

export async function onPreResponse(request: Request, h: ResponseToolkit): Promise<Lifecycle.ReturnValue> {
  const { services } = request.server.app;
  let response = request.response;
  let errorCode: string | null = null;
  const scim = isScimProtocolPath(request.path);
  if ('isBoom' in response && response.isBoom) {
    const { docsBaseUrl } = services.config.api;
    const rendered = scim
      ? renderScimError(response, request.app.requestId, docsBaseUrl)
      : (({ status, body, headers }) => ({ status, body, headers, code: body.error.code }))(
          renderError(response, request.app.requestId, docsBaseUrl),
        );
    if (rendered.status >= 500) request.log(['error'], response);
    // Refused like a file that is gone, but stored bytes that fail authentication were altered
    // behind our back (docs/encryption.md, "Under attack"): an operator must hear of it.
    else if (response instanceof DomainError && response.details?.reason === 'content_corrupt') {
      request.log(['error', 'integrity'], response.message);
    }
    errorCode = rendered.code;
    const replacement = h.response(rendered.body).code(rendered.status);
    for (const [name, value] of Object.entries(rendered.headers)) replacement.header(name, value);
    response = replacement;
  }
  const ok = response as ResponseObject;
  if (scim) ok.type('application/scim+json');
  try {
    await completeIdempotency(request, ok.statusCode, ok.source);
    await auditRequest(request, ok.statusCode, ok.source, errorCode);
    await auditScimRequest(request, ok.statusCode, ok.source);
  } catch (error) {
    request.log(['error', 'bookkeeping'], error as Error);
  }
  decorate(request, ok);
  return response === request.response ? h.continue : response;
}

function decorate(request: Request, response: ResponseObject) {
  response.header('X-Request-Id', request.app.requestId);
  response.header('X-Service-Api-Version', API_REVISION);
  if (servedOverTls(request, request.server.app.services.config)) {
    response.header('Strict-Transport-Security', STRICT_TRANSPORT_SECURITY);
  }
  const deprecated = deprecationOf(request, routeSettings(request).deprecated, response.statusCode);
  if (deprecated) markDeprecated(response, deprecated, request.server.app.services.config.api.docsBaseUrl);
  const rate = request.app.rate;
  if (rate) {
    response.header('X-RateLimit-Limit', String(rate.limit));
    response.header('X-RateLimit-Remaining', String(rate.remaining));
    response.header('X-RateLimit-Reset', String(rate.resetSeconds));
    response.header('X-RateLimit-Policy', `${rate.limit};w=${rate.windowSeconds}`);
  }
}
