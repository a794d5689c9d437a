import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { buildOpenApiDocument } from '../../api/openapi.ts';
import { createServer } from '../../api/server.ts';
import type { ApiDependencies } from '../../api/types.ts';
import { loadConfig } from '../../lib/config.ts';
import { buildServices, type FamilyWorkflows } from '../../lib/services.ts';

// Builds the API server in-process (never listening) and asks it for its own
// OpenAPI document, so the SDK types come from the routes the server registers.
// Nothing here talks to Temporal, Redis or PostgreSQL: building the document
// calls none of them, and a stand-in that throws on any use makes sure of it.
export async function loadOpenApiDocument(): Promise<OpenApiDocument> {
  // The secrets only key things this never does: throwaway ones when the environment has none.
  const throwaway = () => randomBytes(32).toString('base64');
  const config = loadConfig({
    VALISE_SECRET: throwaway(),
    MASTER_KEYS: `throwaway:${throwaway()}`,
    S3_SECRET_ACCESS_KEY: throwaway(),
    ...process.env,
  });
  const unused = new Proxy(
    {},
    {
      get: () => {
        throw new Error('the OpenAPI generator must not reach a workflow lifecycle');
      },
    },
  );
  const services = buildServices(config, unused as DatabasePool, unused as FamilyWorkflows);
  const dependencies = { services, rateLimiter: unused, healthProbes: [] } as unknown as ApiDependencies;
  const server = await createServer(dependencies, { host: '127.0.0.1', port: 0 });
  try {
    // The same call GET /v1/openapi.json makes (api/plugins/meta/openapi.ts), without the request
    // pipeline, which would need Redis for rate limits. JSON round trip: exactly what a client reads.
    return JSON.parse(JSON.stringify(buildOpenApiDocument(server))) as OpenApiDocument;
  } finally {
    await server.stop();
    await services.usage.close();
  }
}

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
  format?: string;
  $ref?: string;
  description?: string;
  [other: string]: unknown;
};

export type OpenApiOperation = {
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: 'path' | 'query'; required: boolean; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema: JsonSchema }> }>;
  'x-required-scope'?: string;
};

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
};
