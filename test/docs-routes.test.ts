import { readdir, readFile } from 'node:fs/promises';
import test from 'ava';
import { startApi, type TestApi } from './helpers/api.ts';

// No page promises what the code does not do: every route the docs name (`GET /v1/…`) is a route
// the server has, unless the docs say it is planned, right after it: `GET /v1/mcp/tokens` (planned).

const DOCS = new URL('../docs/', import.meta.url);
const MENTION = /\b(GET|POST|PUT|PATCH|DELETE|HEAD)\s+`?(\/v1\/[^\s`),;?#]*)/g;
const PLANNED = /^[^\s`]*`?\s*\(planned\b/;

/** `/v1/transfers/{id}`, `/v1/shares/<short_code>/unlock` and `/v1/shares/{code}/unlock` read alike. */
const shape = (path: string) => path.replace(/\{[^}]*\}|<[^>]*>/g, '{}').replace(/[.:]+$/, '');

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

test('every route the docs name is one the server answers, or is marked (planned)', async (t) => {
  const routes = new Set(api.server.table().map((route) => `${route.method.toUpperCase()} ${shape(route.path)}`));
  const missing: string[] = [];
  let named = 0;
  for (const file of (await readdir(DOCS)).filter((f) => f.endsWith('.md')).sort()) {
    const lines = (await readFile(new URL(file, DOCS), 'utf8')).split('\n');
    for (const [index, line] of lines.entries()) {
      for (const match of line.matchAll(MENTION)) {
        const [whole, method = '', path = ''] = match;
        named++;
        const planned = PLANNED.test(line.slice((match.index ?? 0) + whole.length));
        const known = routes.has(`${method} ${shape(path)}`) || (method === 'HEAD' && routes.has(`GET ${shape(path)}`));
        if (!known && !planned) missing.push(`docs/${file}:${index + 1}: ${method} ${path}`);
      }
    }
  }
  t.true(named > 50, `only ${named} routes found in the docs: is the pattern still right?`);
  t.deepEqual(missing, [], 'routes the docs name that the server does not have: build them or mark them (planned)');
});
