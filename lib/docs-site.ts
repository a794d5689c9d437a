import { fileURLToPath } from 'node:url';

// The documentation site every instance serves at /docs (docs/web.md, "The documentation"):
// built by scripts/build-docs.ts into DOCS_SITE, served by api/plugins/web/docs.ts.

/** Where the built pages are: git-ignored, like every dist/. */
export const DOCS_SITE = fileURLToPath(new URL('../dist/docs/', import.meta.url));

/** The guide whose anchors are the error codes: every error's `doc_url` is `{docs}/errors#<code>`. */
export const ERRORS_GUIDE = 'errors';

/** The API reference's page: /docs/reference. */
export const REFERENCE_PAGE = 'reference';

/**
 * The public base URL the reference is built with. The /docs route writes the instance's own in
 * its place, so one build (a Docker image's) serves any address.
 */
export const BUILD_BASE_URL = 'https://valise-public-base-url.invalid';
