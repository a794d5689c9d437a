import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { DEFAULT_SEGMENT_SIZE, decryptedSize } from '../../../lib/crypto/segmented-aead.ts';
import { formatBytes } from '../../../lib/format.ts';
import { findShared, issueDownloadLinks, presentShared } from '../../../lib/transfers/share.ts';
import { clientIp } from '../../client-ip.ts';
import { id, text } from '../../schemas.ts';
import { headerOf } from '../../types.ts';
import { escapeHtml, secureHtml } from '../web/security.ts';
import { codeParams } from './schemas.ts';

// The page behind share_url: server-rendered HTML for people (enhanced by
// web/share.js, which also decrypts e2e files in the browser), the JSON of
// GET /v1/shares/{code} for clients that ask for application/json. Without
// JavaScript, the form still downloads server-mode files through POST /t/{code}.

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
    return html(request, h, page(shared, null));
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
      failAction: (request, h) =>
        html(
          request,
          h,
          shell('Valise', '<p class="notice notice-error">That form was not valid. Go back and try again.</p>'),
        )
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
      return html(request, h, page(presentShared(transfer, files), (error as Error).message)).code(
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

function html(request: Request, h: ResponseToolkit, body: string) {
  return secureHtml(h.response(body), request.server.app.services.config.api.publicBaseUrl);
}

/** Headings for each blocked state: the message under it comes from lib/transfers/share.ts. */
const STATE_TITLES: Record<string, string> = {
  uploading: 'Still uploading',
  scanning: 'Checking for malware',
  awaiting_approval: 'Awaiting approval',
  rejected: 'Not approved',
  limit_reached: 'Download limit reached',
  expired: 'Expired',
  revoked: 'Deleted by the sender',
  infected: 'Removed: malware found',
  upload_incomplete: 'Upload never completed',
};

/** What the recipient will save: e2e blobs are VAL1 with the SDK's 64 KiB segments. */
function shownSize(shared: Shared, size: number): number {
  if (shared.encryption_mode !== 'e2e') return size;
  try {
    return decryptedSize(size, DEFAULT_SEGMENT_SIZE);
  } catch {
    return size;
  }
}

function page(shared: Shared, problem: string | null): string {
  const title = shared.transfer_title || 'Files shared with you';
  const e2e = shared.encryption_mode === 'e2e';
  const total = shared.files.reduce((sum, f) => sum + shownSize(shared, f.size), 0);
  const count = `${shared.files.length} ${shared.files.length === 1 ? 'file' : 'files'}, ${formatBytes(total)}`;
  const until = `${shared.expires_at.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
  const remaining =
    shared.downloads_remaining === null
      ? ''
      : ` · ${shared.downloads_remaining} ${shared.downloads_remaining === 1 ? 'download' : 'downloads'} left`;
  const state = shared.available
    ? `<p class="meta">${escapeHtml(count)} · available until <time datetime="${escapeHtml(shared.expires_at.toISOString())}">${escapeHtml(until)}</time>${escapeHtml(remaining)}</p>`
    : `<div class="notice notice-blocked" role="status" data-state="${escapeHtml(shared.blocked_reason ?? '')}">
<h2>${escapeHtml(STATE_TITLES[shared.blocked_reason ?? ''] ?? 'Not available')}</h2><p>${escapeHtml(shared.message ?? '')}</p></div>`;
  const password =
    shared.available && shared.password_required
      ? `<div class="field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required aria-describedby="password-help">
<p id="password-help" class="help">The sender protected these files with a password.</p></div>`
      : '';
  const rows = shared.files
    .map((file) => {
      const button = shared.available
        ? // e2e buttons start disabled: without the script they would save ciphertext.
          `<button type="submit" name="file_id" value="${escapeHtml(file.id)}" class="secondary"${e2e ? ' disabled' : ''}
 aria-label="Download ${escapeHtml(file.name)}">Download</button>`
        : '';
      return `<li class="file" data-file-id="${escapeHtml(file.id)}" data-size="${file.size}">
<span class="file-name">${escapeHtml(file.name)}</span> <span class="file-size" data-bytes="${shownSize(shared, file.size)}">${escapeHtml(formatBytes(shownSize(shared, file.size)))}</span>
${button}</li>`;
    })
    .join('\n');
  const all =
    shared.available && shared.files.length > 1
      ? `<button type="button" id="download-all" class="primary" hidden>Download all (${escapeHtml(formatBytes(total))})</button>`
      : '';
  const e2eNote = e2e
    ? `<p class="help" id="e2e-note">End-to-end encrypted: the key is in the link you opened and never reaches the server. Your browser decrypts the files.</p>
<noscript><p class="notice notice-error">Decrypting these files needs JavaScript.</p></noscript>`
    : '';
  const body = `<h1>${escapeHtml(title)}</h1>
${state}
${problem ? `<p class="notice notice-error" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" id="share-form" data-code="${escapeHtml(shared.short_code)}" data-mode="${escapeHtml(shared.encryption_mode)}" data-available="${shared.available}">
${password}
<ul class="files" aria-label="Files">${rows}</ul>
${all}
</form>
${e2eNote}
<p id="problem" class="notice notice-error" role="alert" hidden></p>
<div id="progress" class="progress" hidden><label for="progress-bar" id="progress-label">Downloading…</label>
<progress id="progress-bar" max="1" value="0"></progress><p id="progress-detail" class="help" aria-live="polite"></p></div>
<p id="memory-note" class="help" hidden>This browser cannot stream the file to disk, so it is kept in memory until you save it: very large files may fail.</p>`;
  return shell(`${title} · Valise`, body, '/assets/share.js');
}

function shell(title: string, main: string, script?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/assets/styles.css">
${script ? `<script type="module" src="${script}"></script>` : ''}</head>
<body><header class="brand"><span class="logo" aria-hidden="true">▣</span> Valise</header>
<main class="card">${main}</main></body></html>`;
}
