import type { ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import {
  type CollectionDownloadLinksInput,
  downloadableTransfers,
  findSharedCollection,
  issueCollectionDownloadLinks,
  presentSharedItem,
  type SharedCollectionItem,
  viewSharedCollection,
} from '../../../lib/collections/shared.ts';
import { DomainError } from '../../../lib/errors.ts';
import { formatBytes } from '../../../lib/format.ts';
import { issueCollectionArchiveLink } from '../../../lib/zip/archives.ts';
import { clientIp } from '../../client-ip.ts';
import { answerTo } from '../../errors.ts';
import { defineRoute } from '../../route.ts';
import { id, text } from '../../schemas.ts';
import { type AnyRequest, headerOf } from '../../types.ts';
import { shell, wantsJson } from '../shares/page.ts';
import { escapeHtml, secureHtml } from '../web/security.ts';
import { shareCodeParams } from './schemas.ts';

// The page behind a collection's share_url: server-rendered HTML that works
// without a script (docs/collections.md, "The page"). Each transfer has a form
// that asks for its download links (with its password when it has one); the
// page comes back with those links. Clients asking for application/json get
// GET /v1/shared-collections/{code}. An unknown, rotated or disabled code is
// the 404 envelope, like the JSON route.

/** A transfer's answer on the page: its links, or why not. */
type Outcome = { transferId: string; links: { name: string; url: string }[] | null; problem: string | null };

export const pageRoute = defineRoute({
  method: 'GET',
  path: '/c/{code}',
  options: {
    auth: false,
    description: 'Shared collection page',
    tags: ['collections'],
    validate: { params: shareCodeParams },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    if (wantsJson(request)) return viewSharedCollection(services, request.params.code);
    return html(request, h, await render(request, request.params.code, null));
  },
});

export const pageFormRoute = defineRoute({
  method: 'POST',
  path: '/c/{code}',
  options: {
    auth: false,
    description: 'Shared collection page form: download links for one transfer',
    tags: ['collections'],
    payload: { allow: ['application/x-www-form-urlencoded'] },
    validate: {
      params: shareCodeParams,
      payload: Joi.object<Omit<CollectionDownloadLinksInput, 'file_id'>>({
        transfer_id: id.required(),
        password: text.max(256).allow(''),
      }),
    },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const { code } = request.params;
    const form = request.payload;
    // An unknown, rotated or disabled code is the error envelope, as on GET.
    await findSharedCollection(services, code);
    try {
      const links = await issueCollectionDownloadLinks(
        services,
        code,
        { transfer_id: form.transfer_id, password: form.password || undefined },
        { ip: clientIp(request, services.config), userAgent: headerOf(request, 'user-agent') ?? null },
      );
      const outcome = {
        transferId: form.transfer_id,
        links: links.files.map((file) => ({ name: file.name, url: file.download_url })),
        problem: null,
      };
      return html(request, h, await render(request, code, outcome));
    } catch (error) {
      // A refusal made for the visitor (wrong password, limit reached, transfer gone) is shown
      // beside its transfer; internal failures go to the error envelope and the log.
      if (!(error instanceof DomainError)) throw error;
      const { status, headers } = answerTo(error);
      if (status >= 500) throw error;
      const outcome = { transferId: form.transfer_id, links: null, problem: error.message };
      const response = html(request, h, await render(request, code, outcome)).code(status);
      for (const [name, value] of Object.entries(headers)) response.header(name, value);
      return response;
    }
  },
});

export const pageArchiveRoute = defineRoute({
  method: 'POST',
  path: '/c/{code}/archive',
  options: {
    auth: false,
    description: 'Shared collection page form: every open transfer as one ZIP',
    tags: ['collections'],
    payload: { allow: ['application/x-www-form-urlencoded'] },
    validate: { params: shareCodeParams },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const { code } = request.params;
    await findSharedCollection(services, code);
    try {
      const requester = { ip: clientIp(request, services.config), userAgent: headerOf(request, 'user-agent') ?? null };
      const link = await issueCollectionArchiveLink(services, code, {}, requester);
      return h.redirect(link.archive_url).code(303);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const { status, headers } = answerTo(error);
      if (status >= 500) throw error;
      const response = html(request, h, await render(request, code, null, error.message)).code(status);
      for (const [name, value] of Object.entries(headers)) response.header(name, value);
      return response;
    }
  },
});

function html(request: AnyRequest, h: ResponseToolkit, body: string) {
  return secureHtml(h.response(body), request.server.app.services.config.api.publicBaseUrl);
}

async function render(
  request: AnyRequest,
  code: string,
  outcome: Outcome | null,
  archiveProblem: string | null = null,
): Promise<string> {
  const { services } = request.server.app;
  const collection = await findSharedCollection(services, code);
  const items = (await downloadableTransfers(services, collection)).map(presentSharedItem);
  const description = collection.description ? `<p class="help">${escapeHtml(collection.description)}</p>` : '';
  const list = items.length
    ? `<ul class="files" aria-label="Transfers">${items.map((item) => transferBox(code, item, outcome)).join('\n')}</ul>`
    : '<p class="notice" role="status">Nothing here can be downloaded right now.</p>';
  return shell(
    `${collection.title} · Valise`,
    `<h1 id="collection-title">${escapeHtml(collection.title)}</h1>\n${description}\n${archiveForm(code, items, archiveProblem)}\n${list}`,
  );
}

/** "Download all as ZIP": the open transfers in one archive, a folder each (docs/collections.md). */
function archiveForm(code: string, items: SharedCollectionItem[], problem: string | null): string {
  const open = items.filter((item) => item.access === 'open');
  if (open.length === 0) return '';
  const files = open.flatMap((item) => item.files ?? []);
  const size = files.reduce((sum, f) => sum + f.size, 0);
  const left = items.length > open.length;
  return `<form method="post" action="/c/${escapeHtml(code)}/archive" class="archive">
<button type="submit" id="download-all" class="primary">Download all as ZIP (${files.length} ${files.length === 1 ? 'file' : 'files'}, ${escapeHtml(formatBytes(size))})</button>
${left ? '<p class="help">Transfers behind a password or end-to-end encrypted are not in it: download them below.</p>' : ''}
${problem ? `<p class="notice notice-error" role="alert">${escapeHtml(problem)}</p>` : ''}</form>`;
}

function transferBox(code: string, item: SharedCollectionItem, outcome: Outcome | null): string {
  const mine = outcome?.transferId === item.id ? outcome : null;
  const until = `${item.expires_at.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
  const files = item.files ?? [];
  const heading = item.password_required
    ? 'Protected by a password'
    : item.transfer_title || (files.length === 1 ? files[0]?.name : 'Files');
  const summary =
    item.access === 'open'
      ? `${files.length} ${files.length === 1 ? 'file' : 'files'}, ${formatBytes(files.reduce((sum, f) => sum + f.size, 0))} · `
      : '';
  const fileList = files.length
    ? `<ul>${files.map((f) => `<li class="file"><span class="file-name">${escapeHtml(f.name)}</span> <span class="file-size">${escapeHtml(formatBytes(f.size))}</span></li>`).join('')}</ul>`
    : '';
  const warning = item.scan_warning ? `<p class="notice notice-error">${escapeHtml(item.scan_warning)}</p>` : '';
  const problem = mine?.problem ? `<p class="notice notice-error" role="alert">${escapeHtml(mine.problem)}</p>` : '';
  const links = mine?.links
    ? `<ul class="links" aria-label="Download links">${mine.links.map((l) => `<li><a href="${escapeHtml(l.url)}">${escapeHtml(l.name)}</a></li>`).join('')}</ul>
<p class="help">Each link works for 5 minutes.</p>`
    : '';
  const action =
    item.access === 'own_link'
      ? '<p class="help">End-to-end encrypted: download it with the link its sender gave you. The key is in that link, never on our server.</p>'
      : `<form method="post" action="/c/${escapeHtml(code)}">
<input type="hidden" name="transfer_id" value="${escapeHtml(item.id)}">
${
  item.access === 'password'
    ? `<div class="field"><label for="password-${escapeHtml(item.id)}">Password</label>
<input id="password-${escapeHtml(item.id)}" name="password" type="password" autocomplete="current-password" required></div>`
    : ''
}<button type="submit" class="secondary">Get download links</button></form>`;
  return `<li class="collection-transfer" data-transfer-id="${escapeHtml(item.id)}" data-access="${escapeHtml(item.access)}">
<h2>${escapeHtml(heading ?? 'Files')}</h2>
<p class="meta">${escapeHtml(summary)}available until <time datetime="${escapeHtml(item.expires_at.toISOString())}">${escapeHtml(until)}</time></p>
${warning}${fileList}${problem}${links}${action}</li>`;
}
