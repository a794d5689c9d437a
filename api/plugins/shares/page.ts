import type { ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import { DEFAULT_SEGMENT_SIZE, decryptedSize } from '../../../lib/crypto/segmented-aead.ts';
import { DomainError } from '../../../lib/errors.ts';
import { formatBytes } from '../../../lib/format.ts';
import { type DownloadLinksInput, issueDownloadLinks } from '../../../lib/transfers/download-links.ts';
import {
  blockedMessage,
  endedReason,
  findShared,
  presentShared,
  type SharedView,
  unlockWithProof,
  viewShared,
} from '../../../lib/transfers/share.ts';
import { unlockedBy } from '../../../lib/transfers/share-passwords.ts';
import type { BlockedReason } from '../../../lib/vocabulary.ts';
import { clientIp } from '../../client-ip.ts';
import { answerTo } from '../../errors.ts';
import { defineRoute } from '../../route.ts';
import { id, text } from '../../schemas.ts';
import { type AnyRequest, headerOf } from '../../types.ts';
import { escapeHtml, secureHtml } from '../web/security.ts';
import { codeParams } from './schemas.ts';

// The page behind share_url: server-rendered HTML for people (enhanced by
// web/share.js, which also unlocks with the JSON API and decrypts e2e files in
// the browser), the JSON of GET /v1/shares/{code} for clients that ask for
// application/json. Without JavaScript, the form still works through
// POST /t/{code}: the password unlocks the page (which then carries a
// 15-minute proof of it), and a file button downloads a server-mode file.

/** The share page's form (the password, or a file to download with the unlock proof). */
type ShareForm = DownloadLinksInput;

export const pageRoute = defineRoute({
  method: 'GET',
  path: '/t/{code}',
  options: { auth: false, description: 'Share page', tags: ['shares'], validate: { params: codeParams } },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const code = request.params.code;
    if (wantsJson(request)) return viewShared(services, code);
    const { transfer, files } = await findShared(services, code);
    const ended = endedReason(transfer);
    if (ended) return html(request, h, endedPage(ended)).code(410);
    return html(request, h, page(presentShared(transfer, files, false, code), { problem: null, unlock: null }));
  },
});

export const pageDownloadRoute = defineRoute({
  method: 'POST',
  path: '/t/{code}',
  options: {
    auth: false,
    description: 'Share page form: password, then file choice',
    tags: ['shares'],
    payload: { allow: ['application/x-www-form-urlencoded'] },
    validate: {
      params: codeParams,
      payload: Joi.object<ShareForm>({
        password: text.max(256).allow(''),
        file_id: id,
        unlock: Joi.string()
          .max(1024)
          .pattern(/^[\w-]+\.[\w-]+$/, 'token'),
      }),
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
    const code = request.params.code;
    const form = request.payload;
    const requester = { ip: clientIp(request, services.config), userAgent: headerOf(request, 'user-agent') ?? null };
    try {
      if (!form.file_id) {
        const unlocked = await unlockWithProof(services, code, form.password || undefined, requester);
        return html(request, h, page(unlocked.view, { problem: null, unlock: unlocked.unlock }));
      }
      const links = await issueDownloadLinks(
        services,
        code,
        { password: form.password || undefined, file_id: form.file_id, unlock: form.unlock },
        requester,
        'share_page',
      );
      const url = links.files[0]?.download_url;
      if (url) return h.redirect(url).code(303);
      return h.redirect(`/t/${code}`).code(303);
    } catch (error) {
      const shown = publicError(error);
      if (!shown) {
        // Internal detail (a database or storage message, a stack) goes to the log, never to the page.
        request.log(['error', 'share-page'], `${request.app.requestId} ${(error as Error)?.stack ?? String(error)}`);
        return html(request, h, failurePage(request.app.requestId)).code(500);
      }
      const { transfer, files } = await findShared(services, code);
      const ended = endedReason(transfer);
      if (ended) return html(request, h, endedPage(ended)).code(410);
      const proof = unlockedBy(services, transfer, form.unlock) ? (form.unlock ?? null) : null;
      const response = html(
        request,
        h,
        page(presentShared(transfer, files, proof !== null, code), { problem: shown.message, unlock: proof }),
      ).code(shown.status);
      for (const [name, value] of Object.entries(shown.headers)) response.header(name, value);
      return response;
    }
  },
});

/** A refusal made on purpose for the visitor (a DomainError, below 500): its message is theirs to read. */
function publicError(error: unknown): { message: string; status: number; headers: Record<string, string> } | null {
  if (!(error instanceof DomainError)) return null;
  const { status, headers } = answerTo(error);
  return status >= 500 ? null : { message: error.message, status, headers };
}

export function wantsJson(request: AnyRequest): boolean {
  const accept = headerOf(request, 'accept') ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function html(request: AnyRequest, h: ResponseToolkit, body: string) {
  return secureHtml(h.response(body), request.server.app.services.config.api.publicBaseUrl);
}

/** Headings for each blocked state: the message under it comes from lib/transfers/share.ts. */
const STATE_TITLES: Record<BlockedReason, string> = {
  uploading: 'Still uploading',
  scanning: 'Checking for malware',
  awaiting_approval: 'Awaiting approval',
  rejected: 'Not approved',
  limit_reached: 'Download limit reached',
  expired: 'Expired',
  revoked: 'Deleted by the sender',
  infected: 'Removed: malware found',
  upload_incomplete: 'Upload never completed',
  scan_failed: 'Removed: files could not be verified',
};

/** What the recipient will save: e2e blobs are VAL1 with the SDK's 64 KiB segments. */
function shownSize(shared: SharedView, size: number): number {
  if (shared.encryption_mode !== 'e2e') return size;
  return decryptedSize(size, DEFAULT_SEGMENT_SIZE) ?? size;
}

function stateBox(reason: BlockedReason): string {
  return `<div class="notice notice-blocked" role="status" data-state="${escapeHtml(reason)}">
<h2>${escapeHtml(STATE_TITLES[reason] ?? 'Not available')}</h2><p>${escapeHtml(blockedMessage(reason))}</p></div>`;
}

/** An ended transfer: that it is gone and why, nothing about what it was. */
function endedPage(reason: BlockedReason): string {
  return shell('Not available · Valise', `<h1>Not available</h1>\n${stateBox(reason)}`);
}

function failurePage(requestId: string): string {
  return shell(
    'Valise',
    `<h1>Something went wrong</h1>
<p class="notice notice-error" role="alert">Something went wrong on our side. Try again in a moment; if it keeps happening, quote this request id: <code>${escapeHtml(requestId)}</code>.</p>`,
  );
}

/**
 * The share page. Behind a password and not yet unlocked (`files` null), it
 * shows only the password form, the expiry and the downloads left. `unlock` is
 * the proof of the password that the page's buttons send back without JavaScript.
 */
function page(shared: SharedView, options: { problem: string | null; unlock: string | null }): string {
  const { problem, unlock } = options;
  const files = shared.files ?? [];
  const locked = shared.files === null;
  const title = shared.transfer_title || 'Files shared with you';
  const e2e = shared.encryption_mode === 'e2e';
  const total = files.reduce((sum, f) => sum + shownSize(shared, f.size), 0);
  const count = locked
    ? 'Protected by a password'
    : `${files.length} ${files.length === 1 ? 'file' : 'files'}, ${formatBytes(total)}`;
  const until = `${shared.expires_at.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
  const remaining =
    shared.downloads_remaining === null
      ? ''
      : ` · ${shared.downloads_remaining} ${shared.downloads_remaining === 1 ? 'download' : 'downloads'} left`;
  const state = shared.available
    ? `<p class="meta"><span id="share-count">${escapeHtml(count)}</span> · available until <time datetime="${escapeHtml(shared.expires_at.toISOString())}">${escapeHtml(until)}</time>${escapeHtml(remaining)}</p>`
    : stateBox(shared.blocked_reason ?? 'expired');
  const password =
    shared.available && shared.password_required && !unlock
      ? `<div class="field" id="password-field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required aria-describedby="password-help">
<p id="password-help" class="help">The sender protected these files with a password.</p></div>`
      : '';
  const unlockButton =
    shared.available && locked ? '<button type="submit" id="unlock" class="primary">Unlock</button>' : '';
  const proof = unlock ? `<input type="hidden" name="unlock" value="${escapeHtml(unlock)}">` : '';
  const rows = files
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
    shared.available && (locked || files.length > 1)
      ? `<button type="button" id="download-all" class="primary" hidden>Download all as ZIP${locked ? '' : ` (${escapeHtml(formatBytes(total))})`}</button>`
      : '';
  const e2eNote = e2e
    ? `<p class="help" id="e2e-note">End-to-end encrypted: the key is in the link you opened and never reaches the server. Your browser decrypts the files.</p>
<noscript><p class="notice notice-error">Decrypting these files needs JavaScript.</p></noscript>`
    : '';
  const body = `<h1 id="share-title">${escapeHtml(title)}</h1>
${state}
${problem ? `<p class="notice notice-error" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" id="share-form" data-code="${escapeHtml(shared.short_code)}" data-mode="${escapeHtml(shared.encryption_mode)}" data-available="${shared.available}" data-locked="${locked}">
${password}
${proof}
${unlockButton}
<ul class="files" aria-label="Files"${locked ? ' hidden' : ''}>${rows}</ul>
${all}
</form>
${e2eNote}
<p id="problem" class="notice notice-error" role="alert" hidden></p>
<div id="progress" class="progress" hidden><label for="progress-bar" id="progress-label">Downloading…</label>
<progress id="progress-bar" max="1" value="0"></progress><p id="progress-detail" class="help" aria-live="polite"></p></div>
<p id="memory-note" class="help" hidden>This browser cannot stream the file to disk, so it is kept in memory until you save it: very large files may fail.</p>`;
  return shell(`${locked ? 'Files shared with you' : title} · Valise`, body, '/assets/share.js');
}

export function shell(title: string, main: string, script?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/assets/styles.css">
${script ? `<script type="module" src="${script}"></script>` : ''}</head>
<body><header class="brand"><span class="logo" aria-hidden="true">▣</span> Valise</header>
<main class="card">${main}</main></body></html>`;
}
