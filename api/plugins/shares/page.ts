import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { formatBytes } from '../../../lib/format.ts';
import { findShared, issueDownloadLinks, presentShared } from '../../../lib/transfers/share.ts';
import { clientIp } from '../../client-ip.ts';
import { id, text } from '../../schemas.ts';
import { headerOf } from '../../types.ts';
import { codeParams } from './schemas.ts';

// The page behind share_url: plain server-rendered HTML for people, the JSON
// of GET /v1/shares/{code} for clients that ask for application/json.

type Shared = ReturnType<typeof presentShared>;

export const pageRoute: ServerRoute = {
  method: 'GET',
  path: '/t/{code}',
  options: { auth: false, description: 'Share page', tags: ['shares'], validate: { params: codeParams } },
  handler: async (request, h) => {
    const { transfer, files } = await findShared(
      request.server.app.services,
      (request.params as { code: string }).code,
    );
    const shared = presentShared(transfer, files);
    if (wantsJson(request)) return shared;
    return html(h, page(shared, null));
  },
};

export const pageDownloadRoute: ServerRoute = {
  method: 'POST',
  path: '/t/{code}',
  options: {
    auth: false,
    description: 'Share page form: password and file choice',
    tags: ['shares'],
    payload: { allow: ['application/x-www-form-urlencoded'] },
    validate: {
      params: codeParams,
      payload: Joi.object({ password: text.max(256).allow(''), file_id: id.required() }),
      failAction: (_request, h) =>
        html(h, '<!doctype html><title>Valise</title><p>That form was not valid. Go back and try again.</p>')
          .code(400)
          .takeover(),
    },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const code = (request.params as { code: string }).code;
    const form = request.payload as { password?: string; file_id: string };
    try {
      const links = await issueDownloadLinks(
        services,
        code,
        { password: form.password || undefined, file_id: form.file_id },
        {
          ip: clientIp(request, services.config),
          userAgent: headerOf(request, 'user-agent') ?? null,
        },
      );
      const url = links.files[0]?.download_url;
      if (url) return h.redirect(url).code(303);
    } catch (error) {
      const { transfer, files } = await findShared(services, code);
      return html(h, page(presentShared(transfer, files), (error as Error).message)).code(
        (error as { output?: { statusCode: number } }).output?.statusCode ?? 400,
      );
    }
    return h.redirect(`/t/${code}`).code(303);
  },
};

function wantsJson(request: Request): boolean {
  const accept = headerOf(request, 'accept') ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function html(h: ResponseToolkit, body: string) {
  return h
    .response(body)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY');
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function page(shared: Shared, problem: string | null): string {
  const title = escapeHtml(shared.transfer_title || 'Files shared with you');
  const status = shared.available
    ? `<p>Available until ${escapeHtml(shared.expires_at.toISOString().replace('T', ' ').slice(0, 16))} UTC${
        shared.downloads_remaining === null ? '' : ` &middot; ${shared.downloads_remaining} downloads left`
      }.</p>`
    : `<p class="blocked" role="status">${escapeHtml(shared.message ?? '')}</p>`;
  const password = shared.password_required
    ? '<label>Password <input type="password" name="password" autocomplete="off" required></label>'
    : '';
  const rows = shared.files
    .map(
      (file) => `<li><form method="post">${password}<input type="hidden" name="file_id" value="${escapeHtml(file.id)}">
        <span class="name">${escapeHtml(file.name)}</span> <span class="size">${escapeHtml(formatBytes(file.size))}</span>
        ${shared.available ? '<button type="submit">Download</button>' : ''}</form></li>`,
    )
    .join('\n');
  const e2e =
    shared.encryption_mode === 'e2e'
      ? '<p>These files are end-to-end encrypted: the download is ciphertext that only the holder of the key can read.</p>'
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Valise</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
li{list-style:none;margin:.5rem 0}.size{color:#555}.blocked,.problem{padding:.5rem;border-radius:4px;background:#fde8e8}
button{margin-left:.5rem}</style></head>
<body><main><h1>${title}</h1>${status}${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}${e2e}
<ul>${rows}</ul></main></body></html>`;
}
