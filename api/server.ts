import Hapi from '@hapi/hapi';
import { TUS_REQUEST_HEADERS, TUS_RESPONSE_HEADERS } from '../lib/uploads/tus.ts';
import { registerApiKeyAuth } from './auth.ts';
import { answerClientErrors } from './client-errors.ts';
import { validationFailAction } from './errors.ts';
import { onPostAuth } from './extensions/guard.ts';
import { onPreHandler } from './extensions/idempotency.ts';
import { onRequest } from './extensions/request-context.ts';
import { onPreResponse } from './extensions/respond.ts';
import { analyticsPlugin } from './plugins/analytics/index.ts';
import { apiKeysPlugin } from './plugins/api-keys/index.ts';
import { auditPlugin } from './plugins/audit/index.ts';
import { billingPlugin } from './plugins/billing/index.ts';
import { coffresPlugin } from './plugins/coffres/index.ts';
import { collectionsPlugin } from './plugins/collections/index.ts';
import { foldersPlugin } from './plugins/folders/index.ts';
import { gdprPlugin } from './plugins/gdpr/index.ts';
import { intakesPlugin } from './plugins/intakes/index.ts';
import { legalPlugin } from './plugins/legal/index.ts';
import { mcpPlugin } from './plugins/mcp/index.ts';
import { metaPlugin } from './plugins/meta/index.ts';
import { recipientsPlugin } from './plugins/recipients/index.ts';
import { rulesPlugin } from './plugins/rules/index.ts';
import { scimPlugin } from './plugins/scim/index.ts';
import { sharesPlugin } from './plugins/shares/index.ts';
import { transfersPlugin } from './plugins/transfers/index.ts';
import { uploadsPlugin } from './plugins/uploads/index.ts';
import { webPlugin } from './plugins/web/index.ts';
import { webhooksPlugin } from './plugins/webhooks/index.ts';
import type { ApiDependencies } from './types.ts';

export type ServerOptions = { host?: string; port?: number };

/** Builds the API server, initialised but not listening: call start() to serve. */
export async function createServer(deps: ApiDependencies, options: ServerOptions = {}) {
  const { config } = deps.services;
  const server = Hapi.server({
    host: options.host ?? config.api.host,
    port: options.port ?? config.api.port,
    router: { stripTrailingSlash: true },
    routes: {
      cors: {
        origin: ['*'],
        // tus on the upload URLs (lib/uploads/tus.ts): what a browser's tus client sends and reads.
        additionalHeaders: ['Idempotency-Key', ...TUS_REQUEST_HEADERS],
        additionalExposedHeaders: [
          'X-Request-Id',
          'X-Service-Api-Version',
          'X-Service-Idempotent-Replay',
          // The hosted MCP control endpoint's (docs/mcp.md).
          'X-Service-MCP-Hosted',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'X-RateLimit-Policy',
          'Retry-After',
          // A deprecated route's (api/deprecation.ts).
          'Deprecation',
          'Sunset',
          'Link',
          ...TUS_RESPONSE_HEADERS,
        ],
      },
      validate: { failAction: validationFailAction, options: { abortEarly: true, stripUnknown: false } },
      response: { failAction: config.env === 'production' ? 'log' : 'error', options: { abortEarly: true } },
      payload: { maxBytes: config.api.maxJsonBodyBytes, allow: ['application/json'] },
    },
  });

  Object.assign(server.app, deps);
  server.ext('onRequest', onRequest);
  server.ext('onPostAuth', onPostAuth);
  server.ext('onPreHandler', onPreHandler);
  server.ext('onPreResponse', onPreResponse);
  registerApiKeyAuth(server);

  await server.register([
    metaPlugin,
    apiKeysPlugin,
    auditPlugin,
    transfersPlugin,
    foldersPlugin,
    uploadsPlugin,
    sharesPlugin,
    webhooksPlugin,
    rulesPlugin,
    intakesPlugin,
    webPlugin,
    collectionsPlugin,
    recipientsPlugin,
    coffresPlugin,
    legalPlugin,
    gdprPlugin,
    scimPlugin,
    billingPlugin,
    analyticsPlugin,
    mcpPlugin,
  ]);
  // Uploads and downloads of large files outlast Node's default 5-minute request timeout: their
  // routes bound themselves (idle and request timeouts, docs/transfers.md). JSON routes are
  // still bounded by hapi's payload timeout, and request heads by headersTimeout.
  server.listener.requestTimeout = 0;
  // A client trickling its request head (slow-loris) is answered 408 and cut once it has taken
  // REQUEST_HEADERS_TIMEOUT. Node checks that every connectionsCheckingInterval (30 s by default,
  // which let a head run half again as long): a quarter of the timeout keeps the overrun small.
  // Both are read when the server starts listening.
  // (@types/node has the interval as a createServer option only; Node reads the instance's property.)
  Object.assign(server.listener, {
    headersTimeout: config.api.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, config.api.headersTimeoutMs / 4)),
  });
  answerClientErrors(server, config.api.docsBaseUrl);
  await server.initialize();
  return server;
}
