import type { Plugin } from '@hapi/hapi';
import { hostedControlRoute } from './hosted-control.ts';
import { hostedDescriptorRoute } from './hosted-descriptor.ts';
import { hostedTransportRoute } from './hosted-transport.ts';
import { createTokenRoute } from './tokens-create.ts';
import { listTokensRoute } from './tokens-list.ts';
import { revokeTokenRoute } from './tokens-revoke.ts';
import { transportStreamRoute } from './transport-stream.ts';

// /v1/mcp (docs/mcp.md): the tokens are API-key routes; the control endpoint takes an API key or an
// MCP token; the transport, where tools run, takes MCP tokens only.
export const mcpPlugin: Plugin<void> = {
  name: 'valise-mcp',
  register(server) {
    server.route([
      listTokensRoute,
      createTokenRoute,
      revokeTokenRoute,
      hostedDescriptorRoute,
      hostedControlRoute,
      hostedTransportRoute,
      transportStreamRoute,
    ]);
  },
};
