import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadOpenApiDocument } from './openapi-document.ts';
import { GENERATED_EVENTS_PATH, renderFormattedEvents } from './render-events.ts';
import { renderFormattedTypes } from './render-types.ts';

// Regenerates sdk/src/generated/openapi.ts from the routes the API registers,
// and sdk/src/generated/events.ts from the event catalog.
// Usage: node --import tsx sdk/scripts/generate-types.ts

export const GENERATED_TYPES_PATH = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const document = await loadOpenApiDocument();
  await writeFile(GENERATED_TYPES_PATH, renderFormattedTypes(document));
  console.log(`wrote ${GENERATED_TYPES_PATH}`);
  await writeFile(GENERATED_EVENTS_PATH, renderFormattedEvents());
  console.log(`wrote ${GENERATED_EVENTS_PATH}`);
}
