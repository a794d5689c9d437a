import { loadOpenApiDocument } from './openapi-document.ts';

// Prints the OpenAPI document the API serves, built in-process from the routes it registers (as
// generate-types.ts does): scripts/build-docs.ts renders the documentation's API reference from
// it. Usage: node --import tsx sdk/scripts/print-openapi.ts > openapi.json
process.stdout.write(`${JSON.stringify(await loadOpenApiDocument(), null, 2)}\n`);
