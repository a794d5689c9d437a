import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import Joi from 'joi';
import { BUILD_BASE_URL, DOCS_SITE, REFERENCE_PAGE } from '../../../lib/docs-site.ts';
import { DomainError } from '../../../lib/errors.ts';
import { defineRoute } from '../../route.ts';
import { pagePolicy, secureHtml } from './security.ts';

// The instance's own documentation at /docs (docs/web.md, "The documentation"): the guides, their
// index and the API reference, built by scripts/build-docs.ts into dist/docs before the API
// starts. A page is /docs/<name> (its file <name>.html), the index /docs; the reference's scripts
// and styles are files beside it. Like every page, nothing is loaded from another origin.

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * What the reference's page needs beyond the other pages' policy, and nothing from another origin:
 * its styles are files of this origin, but its script (styled-components) adds them at run time
 * through an empty <style> element it creates (allowed by the hash of the empty string; the rules
 * themselves go in with CSSOM, which the policy does not govern), and its icons are a font in a
 * data: URL.
 */
const REFERENCE_DIRECTIVES = [
  "style-src 'self' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",
  "font-src 'self' data:",
];

/** The built file a path names, or null when it names none. */
export function docsFile(path: string): string | null {
  const name = path === '' ? 'index.html' : extname(path) === '' ? `${path}.html` : path;
  if (!TYPES[extname(name)]) return null;
  const file = resolve(DOCS_SITE, name);
  return file.startsWith(DOCS_SITE.endsWith(sep) ? DOCS_SITE : DOCS_SITE + sep) ? file : null;
}

type BuiltPage = { body: string; type: string; etag: string };

// The site is built before the API starts and does not change while it runs: each file is read,
// given this instance's addresses and hashed once per process, not on every request (the
// reference's script alone is 2.6 MB). Keyed by the addresses too (a test process runs several
// APIs); a file that is not there is not remembered, so any name asked for costs nothing kept.
const builtPages = new Map<string, Promise<BuiltPage | null>>();

function builtPage(file: string, api: { docsBaseUrl: string; publicBaseUrl: string }): Promise<BuiltPage | null> {
  const key = `${file}\n${api.docsBaseUrl}\n${api.publicBaseUrl}`;
  let page = builtPages.get(key);
  if (!page) {
    page = readFile(file, 'utf8').then(
      (raw) => {
        const type = TYPES[extname(file)] ?? 'application/octet-stream';
        // The reference was built for no address in particular: it names this instance's.
        const body = type.startsWith('text/html')
          ? raw.replaceAll(`${BUILD_BASE_URL}/docs`, api.docsBaseUrl).replaceAll(BUILD_BASE_URL, api.publicBaseUrl)
          : raw;
        return { body, type, etag: createHash('sha256').update(body).digest('base64url').slice(0, 22) };
      },
      () => {
        builtPages.delete(key);
        return null;
      },
    );
    builtPages.set(key, page);
  }
  return page;
}

export const docsRoute = defineRoute({
  method: 'GET',
  path: '/docs/{path*}',
  options: {
    auth: false,
    description: 'Documentation pages',
    tags: ['web'],
    plugins: { valise: { rateLimited: false } },
    validate: {
      params: Joi.object<{ path?: string }>({
        path: Joi.string()
          .max(128)
          .pattern(/^[\w-]+(?:\.[a-z]+)?$/, 'page name')
          .allow(''),
      }),
    },
  },
  handler: async (request, h) => {
    const { config } = request.server.app.services;
    const file = docsFile(request.params.path ?? '');
    const page = file ? await builtPage(file, config.api) : null;
    if (!file || page === null) throw new DomainError('not_found', 'No such documentation page.');
    const { body, type, etag } = page;
    if (type.startsWith('text/html')) {
      const reference = file === resolve(DOCS_SITE, `${REFERENCE_PAGE}.html`);
      return secureHtml(h.response(body), config.api.publicBaseUrl, [], reference ? REFERENCE_DIRECTIVES : []);
    }
    return h
      .response(body)
      .type(type)
      .etag(etag)
      .header('Cache-Control', 'public, max-age=300, must-revalidate')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', pagePolicy(config.api.publicBaseUrl))
      .header('Cross-Origin-Resource-Policy', 'same-origin');
  },
});
