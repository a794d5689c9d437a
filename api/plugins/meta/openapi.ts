import { buildOpenApiDocument } from '../../openapi.ts';
import { defineRoute } from '../../route.ts';

let cached: object | undefined;

export const openApiRoute = defineRoute({
  method: 'GET',
  path: '/v1/openapi.json',
  options: { auth: false, description: 'This API as an OpenAPI 3.1 document', tags: ['meta'] },
  handler: (request) => {
    // Routes are fixed once the server starts, so the document is built once.
    cached ??= buildOpenApiDocument(request.server);
    return cached;
  },
});
