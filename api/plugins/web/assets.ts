import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import Joi from 'joi';
import { DomainError } from '../../../lib/errors.ts';
import { defineRoute } from '../../route.ts';
import { pagePolicy } from './security.ts';

// Static files of the web UI: `web/` at /assets/…, the SDK's browser build
// (`sdk/dist`, built by `npx tsc -p sdk/tsconfig.json`) at /assets/sdk/…, so the
// pages use the same VAL1, HKDF and HPKE code as every other client, and the
// SDK's own dependencies at /assets/vendor/<name>/… (the intake page's import
// map names them). Bare paths are rewritten to /v1/… by the request-context
// extension, hence the declared path.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const ROOTS = { web: resolve(REPO, 'web'), sdk: resolve(REPO, 'sdk/dist') };

/**
 * The npm packages a page may load, by the name they have under /assets/vendor/: the SDK's HPKE
 * and what it imports, nothing else of node_modules. Only their ES module builds are served.
 */
export const VENDOR_PACKAGES: Readonly<Record<string, string>> = {
  'hpke-core': '@hpke/core',
  'hpke-common': '@hpke/common',
  'hpke-dhkem-x25519': '@hpke/dhkem-x25519',
  'hpke-hybridkem-x-wing': '@hpke/hybridkem-x-wing',
  mlkem: 'mlkem',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/** Where a requested asset lives on disk, or null when it is not one we serve. */
export function assetFile(path: string): string | null {
  const [root, relative] = rootOf(path) ?? [null, ''];
  if (!root) return null;
  // The SDK and package directories hold declarations and maps too: only their modules are served.
  if (root !== ROOTS.web && extname(relative) !== '.js') return null;
  if (!TYPES[extname(relative)]) return null;
  const file = resolve(root, relative);
  return file.startsWith(root + sep) ? file : null;
}

function rootOf(path: string): [string, string] | null {
  if (path.startsWith('sdk/')) return [ROOTS.sdk, path.slice(4)];
  if (!path.startsWith('vendor/')) return [ROOTS.web, path];
  const [, name = '', ...rest] = path.split('/');
  const pkg = Object.hasOwn(VENDOR_PACKAGES, name) ? VENDOR_PACKAGES[name] : undefined;
  return pkg ? [resolve(REPO, 'node_modules', pkg, 'esm'), rest.join('/')] : null;
}

export const assetsRoute = defineRoute({
  method: 'GET',
  path: '/assets/{path*}',
  options: {
    auth: false,
    description: 'Web UI assets',
    tags: ['web'],
    plugins: { valise: { rateLimited: false } },
    validate: {
      params: Joi.object<{ path: string }>({
        path: Joi.string()
          .max(256)
          .pattern(/^[\w./-]+$/, 'asset path')
          .required(),
      }),
    },
  },
  handler: async (request, h) => {
    const path = request.params.path;
    const file = assetFile(path);
    const body = file ? await readFile(file).catch(() => null) : null;
    if (!file || !body) throw new DomainError('not_found', 'No such asset.');
    const etag = createHash('sha256').update(body).digest('base64url').slice(0, 22);
    return (
      h
        .response(body)
        .type(TYPES[extname(file)] ?? 'application/octet-stream')
        .etag(etag)
        // Names are not content-hashed: cache briefly, then revalidate with the ETag.
        .header('Cache-Control', 'public, max-age=300, must-revalidate')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', pagePolicy(request.server.app.services.config.api.publicBaseUrl))
        .header('Cross-Origin-Resource-Policy', 'same-origin')
    );
  },
});
