import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { defineRoute } from '../../route.ts';
import { intakeParams } from '../intakes/schemas.ts';
import { secureHtml } from './security.ts';

// The intake page at /i/{id} (docs/intakes.md, "The intake page"). It is
// static and the same for every id: the publishable key travels in the link's
// fragment, so the server learns nothing from the request and the page tells
// nobody whether an intake exists; its script reads the form with the key.
// Its import map (the SDK's HPKE packages, served at /assets/vendor/) is its
// one inline script, allowed by its hash.

const PAGE = readFileSync(new URL('../../../web/intake.html', import.meta.url), 'utf8');
const IMPORT_MAP = /<script type="importmap">([\s\S]*?)<\/script>/.exec(PAGE)?.[1] ?? '';
const IMPORT_MAP_HASH = `sha256-${createHash('sha256').update(IMPORT_MAP).digest('base64')}`;

export const intakePageRoute = defineRoute({
  method: 'GET',
  path: '/i/{id}',
  options: { auth: false, description: 'Intake page', tags: ['web'], validate: { params: intakeParams } },
  handler: (request, h) =>
    secureHtml(h.response(PAGE), request.server.app.services.config.api.publicBaseUrl, [IMPORT_MAP_HASH]),
});
