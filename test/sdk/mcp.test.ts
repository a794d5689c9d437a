import test from 'ava';
import { AuthenticationError, PermissionError, Valise } from '../../sdk/src/index.ts';
import { sdkSession } from './session.ts';

// The SDK's `mcp` namespace against the real API: tokens, the descriptor and the control endpoint.

const sdk = sdkSession('SDK MCP');

test('mcp: createToken, listTokens, describe and control, then revokeToken', async (t) => {
  const created = await sdk.valise.mcp.createToken({ name: 'agent', scopes: ['transfers:read'] });
  t.regex(created.token, /^svc_mcp_/);
  const listed = await sdk.valise.mcp.listTokens();
  t.true(listed.data.some((token) => token.id === created.id && token.scopes.includes('transfers:read')));

  // A client whose apiKey is the MCP token reads the endpoint like an API key does.
  const asToken = new Valise({ apiKey: created.token, baseUrl: sdk.api.url });
  const descriptor = await asToken.mcp.describe(sdk.ws.workspace_id);
  t.is(descriptor.transport.url, `${sdk.api.url}/v1/mcp/hosted/${sdk.ws.workspace_id}/transport`);
  const answer = await asToken.mcp.control(sdk.ws.workspace_id, { jsonrpc: '2.0', id: 1, method: 'ping' });
  t.deepEqual(answer, { jsonrpc: '2.0', id: 1, result: {} });
  const elsewhere = await t.throwsAsync(asToken.mcp.describe('00000000-0000-4000-8000-000000000000'), {
    instanceOf: PermissionError,
  });
  t.is(elsewhere?.code, 'forbidden');
  // It is no API key anywhere else.
  await t.throwsAsync(asToken.transfers.list(), { instanceOf: AuthenticationError });

  const revoked = await sdk.valise.mcp.revokeToken(created.id);
  t.true(revoked.revoked);
  const refused = await t.throwsAsync(asToken.mcp.describe(sdk.ws.workspace_id), { instanceOf: AuthenticationError });
  t.is(refused?.code, 'revoked_api_key');
});
