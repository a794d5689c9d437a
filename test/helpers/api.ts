import { randomBytes } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import { defaultHealthProbes } from '../../api/health-probes.ts';
import { RateLimiter } from '../../api/rate-limiter.ts';
import { createServer } from '../../api/server.ts';
import { type IssueApiKeyInput, issueApiKey, resolveScopes } from '../../lib/api-keys/service.ts';
import { openApiResources } from '../../lib/composition.ts';
import { loadConfig } from '../../lib/config.ts';
import { TOTP_STEP_MS, totpCode } from '../../lib/crypto/totp.ts';
import type { Services } from '../../lib/services.ts';
import type { Environment } from '../../lib/vocabulary.ts';
import { type BootstrapResult, bootstrapWorkspace } from '../../lib/workspaces/bootstrap.ts';
import { checkTrafficAgainstOpenApi } from './openapi-check.ts';
import { freePort } from './ports.ts';

// A real API server on a loopback port, wired to the test stack that
// scripts/test.sh started (PostgreSQL, Redis, Temporal with its worker, MinIO,
// clamd, SMTP). Each test file starts its own, with its own rate-limit space.

export type TestApi = {
  url: string;
  server: Server;
  services: Services;
  call: (method: string, path: string, options?: CallOptions) => Promise<ApiResponse>;
  workspace: (name?: string) => Promise<TestWorkspace>;
  close: () => Promise<void>;
};

export type CallOptions = {
  key?: string | undefined;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
};

export type ApiResponse = { status: number; headers: Headers; body: any; text: string };

export type TestWorkspace = BootstrapResult & {
  /**
   * A verification code of a time step this workspace has not handed out before, valid now (the current step,
   * or the next one, which the server accepts as one step of drift). The server accepts each step once (RFC 6238
   * §5.2), so two codes are at hand at any moment; throws when both are spent: `await nextMfa()` then. Codes are
   * handed out in order, so requests carrying them must reach the server in that order: tests that send codes
   * concurrently use a workspace of their own.
   */
  mfa: () => string;
  /** Like mfa(), or undefined when no unused step is valid yet. */
  tryMfa: () => string | undefined;
  /** Like mfa(), waiting for the next 30 s step when both codes at hand are spent. Use sparingly. */
  nextMfa: () => Promise<string>;
  /**
   * A key of the owner's, minted through the domain layer: no route, no authorisation, no MFA. For fixtures;
   * tests of key creation itself go through the API. Fires api_key.created like the route.
   */
  mintKey: (body: MintKeyBody, environment?: Environment) => Promise<MintedKey>;
};

export type MintKeyBody = Partial<Omit<IssueApiKeyInput, 'name' | 'scopes'>> & { name: string; scopes?: string[] };
export type MintedKey = Awaited<ReturnType<typeof issueApiKey>>;

export async function startApi(env: Record<string, string> = {}): Promise<TestApi> {
  // Links the API hands out (upload URLs, download links) must point at this server.
  const port = await freePort();
  const config = loadConfig({
    ...process.env,
    REDIS_PREFIX: `valise-test:${randomBytes(6).toString('hex')}:`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ...env,
  });
  const resources = await openApiResources(config, { queueUntilRedisConnects: true });
  const { db, services } = resources;
  const server = await createServer(
    {
      services,
      rateLimiter: new RateLimiter(resources.redis, config.redis.prefix),
      healthProbes: defaultHealthProbes(resources),
    },
    { host: '127.0.0.1', port },
  );
  server.events.on({ name: 'request', channels: ['error', 'app'] }, (request, event) => {
    if (event.tags.includes('error'))
      console.error(`[api] ${request.method} ${request.path}`, event.error ?? event.data);
  });
  // OPENAPI_CHECK=1: every exchange of this server is held against its own OpenAPI document, and
  // close() fails on a disagreement (test/helpers/openapi-check.ts; test/openapi-validator.test.ts).
  const openApiCheck = process.env.OPENAPI_CHECK === '1' ? checkTrafficAgainstOpenApi(server) : undefined;
  await server.start();
  const url = `http://127.0.0.1:${server.info.port}`;

  const call = callerAt(url);

  const workspace = async (name = 'Test workspace'): Promise<TestWorkspace> => {
    const result = await bootstrapWorkspace(db, services.keys, {
      workspaceName: name,
      ownerEmail: `owner-${randomBytes(4).toString('hex')}@example.com`,
    });
    let lastStep = Number.NEGATIVE_INFINITY;
    const tryMfa = () => {
      const now = Math.floor(Date.now() / TOTP_STEP_MS);
      const step = Math.max(lastStep + 1, now);
      if (step > now + 1) return undefined;
      lastStep = step;
      return totpCode(result.mfa_secret, step * TOTP_STEP_MS);
    };
    const mfa = () => {
      const code = tryMfa();
      if (code === undefined) throw new Error('both codes at hand are spent: await ws.nextMfa() for the next step');
      return code;
    };
    const nextMfa = async () => {
      for (;;) {
        const code = tryMfa();
        if (code !== undefined) return code;
        // The step after lastStep is at hand (as the next step) once the clock enters lastStep.
        const wait = lastStep * TOTP_STEP_MS - Date.now() + 50;
        await new Promise((resolve) => setTimeout(resolve, Math.max(wait, 50)));
      }
    };
    const mintKey = (body: MintKeyBody, environment: Environment = 'live') => {
      const keyType = body.key_type ?? 'full';
      return issueApiKey(
        services,
        { workspaceId: result.workspace_id, userId: result.user_id, environment },
        { ...body, key_type: keyType, scopes: resolveScopes(keyType, body.scopes) },
      );
    };
    return { ...result, mfa, tryMfa, nextMfa, mintKey };
  };

  return {
    url,
    server,
    services,
    call,
    workspace,
    close: async () => {
      await server.stop();
      await resources.close();
      if (openApiCheck && openApiCheck.violations.length > 0) {
        const { violations, checked } = openApiCheck;
        throw new Error(
          `OPENAPI_CHECK: ${violations.length} of ${checked} exchanges disagree with /v1/openapi.json:\n${violations.join('\n')}`,
        );
      }
    },
  };
}

/** Calls to the API at `url`: JSON in and out, a key as its Bearer token. */
export function callerAt(url: string) {
  return async (method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, stepMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
