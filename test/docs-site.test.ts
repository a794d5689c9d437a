import test from 'ava';
import { renderError } from '../api/errors.ts';
import { BUILD_BASE_URL, ERRORS_GUIDE, REFERENCE_PAGE } from '../lib/docs-site.ts';
import { DomainError, ERROR_CODES } from '../lib/errors.ts';
import { externalLoads } from '../scripts/build-docs.ts';
import { startApi, type TestApi } from './helpers/api.ts';

// The documentation each instance serves at /docs (docs/web.md, "The documentation"), built by
// scripts/build-docs.ts before the API starts: every error's doc_url and the welcome's docs_url
// resolve on the instance itself, every link between its pages leads to a page and an anchor
// that exist, and nothing on them comes from another origin.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

/** The ids a page's elements carry: its anchors. */
const idsOf = (html: string) => new Set([...html.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1] ?? ''));

async function page(url: string): Promise<{ status: number; html: string; headers: Headers }> {
  const response = await fetch(url);
  return { status: response.status, html: await response.text(), headers: response.headers };
}

test('every error code the API declares has its section, where the doc_url the API answers with leads', async (t) => {
  // Real answers first: their doc_url is the one every error is given.
  const answered = [
    await api.call('GET', '/v1/me'),
    await api.call('GET', '/v1/me', { key: 'svc_test_not-a-key' }),
    await api.call('GET', '/v1/no-such-route'),
  ].map((response) => response.body.error);
  for (const error of answered) {
    t.is(error.doc_url, `${api.url}/docs/errors#${error.code}`, error.code);
  }
  const docsBaseUrl = api.services.config.api.docsBaseUrl;
  t.is(docsBaseUrl, `${api.url}/docs`);
  const checked: string[] = [];
  for (const code of ERROR_CODES) {
    const { body } = renderError(new DomainError(code, 'x'), 'req_docs', docsBaseUrl);
    const url = new URL(body.error.doc_url ?? '');
    t.is(url.hash, `#${code}`);
    const { status, html } = await page(url.href);
    t.is(status, 200, url.href);
    t.true(idsOf(html).has(code), `${url.pathname} has no anchor for ${code}`);
    checked.push(code);
  }
  t.deepEqual(checked, [...ERROR_CODES]);
});

test("GET /v1/welcome's docs_url answers 200: the index of the guides and the reference", async (t) => {
  const welcome = await api.call('GET', '/v1/welcome');
  t.is(welcome.body.docs_url, `${api.url}/docs`);
  const index = await page(welcome.body.docs_url);
  t.is(index.status, 200);
  t.regex(index.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(index.html, /<html lang="en">/);
  t.true(index.html.includes(`href="/docs/${REFERENCE_PAGE}"`));
  t.true(index.html.includes(`href="/docs/${ERRORS_GUIDE}"`));
  t.true(index.html.includes('href="/docs/webhooks"'));
});

test('every link between the pages leads to a page that answers and an anchor it has', async (t) => {
  const pages = new Map<string, Set<string>>();
  const links: { from: string; to: string }[] = [];
  const queue = ['/docs'];
  while (queue.length > 0) {
    const path = queue.shift() ?? '';
    if (pages.has(path)) continue;
    const { status, html } = await page(`${api.url}${path}`);
    if (status !== 200) {
      t.fail(`${path} answered ${status}`);
      continue;
    }
    pages.set(path, idsOf(html));
    if (path === `/docs/${REFERENCE_PAGE}`) continue; // its own links are the reference's script's
    for (const [, href = ''] of html.matchAll(/<a\b[^>]*\bhref="(\/docs[^"]*)"/g)) {
      const [target = ''] = href.split('#');
      links.push({ from: path, to: href });
      if (!pages.has(target)) queue.push(target);
    }
  }
  t.true(pages.size > 25, `only ${pages.size} pages reached from the index`);
  const broken = links.filter(({ to }) => {
    const [target = '', anchor] = to.split('#');
    const ids = pages.get(target);
    return !ids || (anchor !== undefined && anchor !== '' && !ids.has(decodeURIComponent(anchor)));
  });
  t.deepEqual(
    broken.map(({ from, to }) => `${from} -> ${to}`),
    [],
  );
  // Guides name each other in prose (`docs/webhooks.md, "Delivery"`): those became links to the section.
  t.true(links.some(({ to }) => to === '/docs/webhooks#delivery'));
});

test('the pages load nothing from another origin, and their policy allows this origin only', async (t) => {
  const origin = new URL(api.url).origin;
  for (const path of ['/docs', `/docs/${ERRORS_GUIDE}`, '/docs/transfers', `/docs/${REFERENCE_PAGE}`]) {
    const { status, html, headers } = await page(`${api.url}${path}`);
    t.is(status, 200, path);
    t.deepEqual(externalLoads(html), [], path);
    const policy = headers.get('content-security-policy') ?? '';
    t.regex(policy, /default-src 'self'/, path);
    t.notRegex(policy, /unsafe-inline|unsafe-eval/, path);
    const origins = [...policy.matchAll(/https?:\/\/[^\s;]+/g)].map((m) => m[0]);
    t.deepEqual([...new Set(origins)], origins.length ? [origin] : [], `${path}: ${policy}`);
    t.false(
      /<script\b(?![^>]*\bsrc=)(?![^>]*type="application\/(?:ld\+)?json")[^>]*>/.test(html),
      `${path}: inline script`,
    );
    t.false(/<style\b/.test(html), `${path}: inline style element`);
    for (const [, asset = ''] of html.matchAll(/(?:src|href)="(\/(?:docs|assets)\/[^"#]+\.(?:js|css))"/g)) {
      const loaded = await fetch(`${api.url}${asset}`);
      t.is(loaded.status, 200, asset);
      await loaded.arrayBuffer();
    }
  }
});

test('the API reference is the document this API serves, at its own address', async (t) => {
  const { html } = await page(`${api.url}/docs/${REFERENCE_PAGE}`);
  t.false(html.includes(BUILD_BASE_URL));
  let text = html;
  for (const [, script = ''] of html.matchAll(/<script\b[^>]*\bsrc="(\/docs\/[^"]+)"/g)) {
    text += await (await fetch(`${api.url}${script}`)).text();
  }
  const document = (await api.call('GET', '/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const missing = Object.values(document.paths)
    .flatMap((methods) => Object.values(methods).map((operation) => operation.operationId))
    .filter((id) => !text.includes(id));
  t.deepEqual(missing, [], 'operations the reference does not show');
  t.true(Object.keys(document.paths).every((path) => !path.startsWith('/docs') && !path.startsWith('/v1/docs')));
});

test('a page that is not there is the 404 envelope; nothing outside the built pages is served', async (t) => {
  for (const path of ['/docs/no-such-guide', '/docs/..%2Fpackage.json', '/docs/%2e%2e/%2e%2e/package.json']) {
    const response = await api.call('GET', path);
    t.true([400, 404].includes(response.status), `${path}: ${response.status}`);
    t.true(['not_found', 'validation_error'].includes(response.body.error?.code), path);
  }
});
