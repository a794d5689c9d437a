import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked, type Token, type Tokens } from 'marked';
import { BUILD_BASE_URL, DOCS_SITE, ERRORS_GUIDE, REFERENCE_PAGE } from '../lib/docs-site.ts';
import { ERROR_CODES } from '../lib/errors.ts';

// Renders the documentation every instance serves at /docs (docs/web.md, "The documentation"):
// each guide of docs/ to dist/docs/<name>.html, an index of them, and the API reference from the
// OpenAPI document the API serves, rendered by `redocly build-docs`. Nothing on the pages comes
// from another origin: the reference's inline scripts and styles are moved to files of their own,
// and the build fails on any external script, style, font or image left in a page.
// Usage: sh scripts/node.sh scripts/build-docs.ts (make up, make test, dev-test and the Dockerfile
// run it before the API starts).

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SOURCE = join(ROOT, 'docs');

export type Guide = { name: string; title: string; summary: string; html: string; ids: string[] };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** A heading's plain text: what its anchor is made from and what a title shows. */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      const children = (token as { tokens?: Token[] }).tokens;
      return children ? plainText(children) : ((token as { text?: string }).text ?? '');
    })
    .join('');
}

/**
 * GitHub's anchors (github-slugger): lower case, punctuation but `-` and `_` dropped, spaces as
 * `-`, a repeated one numbered. The guides already link to each other's sections this way, and
 * the same heading keeps its anchor from one build to the next.
 */
export function anchorMaker(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = text
      .toLowerCase()
      .trim()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/**
 * Where a guide's link or its mention of another guide (`docs/webhooks.md`) leads on the site:
 * `/docs/webhooks`, with its `#section` kept. Other links are left as they are.
 */
export function siteLink(href: string, guides: ReadonlySet<string>): string | null {
  const match = /^(?:\.{1,2}\/)*(?:docs\/)?([\w-]+)\.md(#[^\s]*)?$/.exec(href);
  if (!match || !guides.has(match[1] ?? '')) return null;
  return `/docs/${match[1]}${match[2] ?? ''}`;
}

/** Every guide's anchors, by name: a mention of a section links to it only when it exists. */
export type SiteAnchors = ReadonlyMap<string, ReadonlySet<string>>;

/** `docs/webhooks.md`, or `docs/webhooks.md, "Retries"`: how the guides name each other in prose. */
const MENTION = /(?:\.\.\/)?docs\/([\w-]+)\.md(?:, "([^"]+)")?/g;

/** Plain text with its mentions of guides (and their sections) as links to the rendered pages. */
function linkMentions(text: string, escaped: boolean, anchors: SiteAnchors): string | null {
  let html = '';
  let last = 0;
  for (const match of text.matchAll(MENTION)) {
    const [whole, name = '', section] = match;
    const ids = anchors.get(name);
    if (!ids) continue;
    const id = section === undefined ? undefined : anchorMaker()(section);
    const href = `/docs/${name}${id !== undefined && ids.has(id) ? `#${id}` : ''}`;
    const at = match.index ?? 0;
    html += `${escaped ? text.slice(last, at) : escapeHtml(text.slice(last, at))}<a href="${escapeHtml(href)}">${escaped ? whole : escapeHtml(whole)}</a>`;
    last = at + whole.length;
  }
  if (last === 0) return null;
  return html + (escaped ? text.slice(last) : escapeHtml(text.slice(last)));
}

/** A token inside a link or a heading: what it mentions is not made a link. */
type Unlinked = { unlinked?: boolean };

function unlinked(tokens: readonly Token[]): void {
  for (const token of tokens) {
    (token as Unlinked).unlinked = true;
    unlinked((token as { tokens?: Token[] }).tokens ?? []);
  }
}

/**
 * One guide as HTML: headings with their anchors, links to other guides (`webhooks.md`) and
 * mentions of them (`docs/webhooks.md, "Retries"`, in prose or code) leading to their pages.
 */
export function renderGuide(name: string, markdown: string, anchors: SiteAnchors): Guide {
  const guides = new Set(anchors.keys());
  const anchor = anchorMaker();
  const ids: string[] = [];
  let title = '';
  const walk = (token: Token) => {
    if (token.type === 'link') {
      const link = token as Tokens.Link;
      link.href = siteLink(link.href, guides) ?? link.href;
    }
    // Mentions in a link's own text stay text (a link holds no link), and so do a heading's (its anchor).
    if (token.type === 'link' || token.type === 'heading') unlinked(token.tokens ?? []);
    if (token.type === 'text' && !token.tokens && !(token as Unlinked).unlinked) {
      const html = linkMentions(token.text, token.escaped === true, anchors);
      if (html !== null) Object.assign(token, { type: 'html', block: false, pre: false, text: html, raw: html });
    }
  };
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        const text = plainText(tokens);
        const id = anchor(text);
        ids.push(id);
        if (depth === 1 && !title) title = text;
        return `<h${depth} id="${escapeHtml(id)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      codespan(token) {
        const code = `<code>${escapeHtml(token.text)}</code>`;
        const href = (token as Unlinked).unlinked ? null : siteLink(token.text, guides);
        return href ? `<a href="${escapeHtml(href)}">${code}</a>` : code;
      },
    },
  });
  const tokens = marked.lexer(markdown);
  const first = tokens.find((token) => token.type === 'paragraph') as Tokens.Paragraph | undefined;
  const summary = first ? plainText(first.tokens).replace(/\s+/g, ' ').trim() : '';
  marked.walkTokens(tokens, walk);
  const html = marked.parser(tokens);
  return { name, title: title || name, summary, html, ids };
}

/** The frame of every page but the reference: a skip link, the site's header and navigation, the content. */
export function docsPage(title: string, content: string, current: string): string {
  const item = (href: string, label: string, page: string) =>
    `<li><a href="${href}"${page === current ? ' aria-current="page"' : ''}>${label}</a></li>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Valise documentation</title>
<link rel="stylesheet" href="/assets/styles.css"><link rel="stylesheet" href="/assets/docs.css"></head>
<body class="docs"><a class="skip-link" href="#content">Skip to content</a>
<header class="brand docs-header"><a class="home" href="/docs"><span class="logo" aria-hidden="true">▣</span> Valise documentation</a>
<nav aria-label="Documentation"><ul>${item('/docs', 'Guides', 'index')}${item(`/docs/${REFERENCE_PAGE}`, 'API reference', REFERENCE_PAGE)}${item(`/docs/${ERRORS_GUIDE}`, 'Errors', ERRORS_GUIDE)}</ul></nav></header>
<main id="content" class="card docs-content" tabindex="-1">
${content}
</main></body></html>
`;
}

function indexPage(guides: readonly Guide[]): string {
  const readme = readmeSummaries();
  const entries = [...guides]
    .sort((a, b) => a.title.localeCompare(b.title))
    .map(
      (guide) =>
        `<li><a href="/docs/${escapeHtml(guide.name)}">${escapeHtml(guide.title)}</a>${guide.summary ? `<p>${escapeHtml(summaryOf(guide, readme))}</p>` : ''}</li>`,
    )
    .join('\n');
  return docsPage(
    'Guides',
    `<h1 id="guides">Valise documentation</h1>
<p>The guides of this Valise instance, and its <a href="/docs/${REFERENCE_PAGE}">API reference</a>, generated from the OpenAPI document it serves at <a href="/v1/openapi.json"><code>/v1/openapi.json</code></a>.</p>
<h2 id="all-guides">Guides</h2>
<ul class="guide-list">
${entries}
</ul>`,
    'index',
  );
}

/**
 * What the index says of each guide: its line in the README's "Where to look next" (`docs/x.md`
 * in the first cell), or else the start of its first paragraph.
 */
function readmeSummaries(): Map<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const summaries = new Map<string, string>();
  for (const [, names = '', what = ''] of readme.matchAll(/^\|([^|]*docs\/[\w-]+\.md[^|]*)\|([^|]+)\|\s*$/gm)) {
    for (const [, name = ''] of names.matchAll(/docs\/([\w-]+)\.md/g)) summaries.set(name, what.trim());
  }
  return summaries;
}

function summaryOf(guide: Guide, readme: ReadonlyMap<string, string>): string {
  const line = readme.get(guide.name);
  if (line) return `${line.charAt(0).toUpperCase()}${line.slice(1).replaceAll('`', '')}.`;
  if (guide.summary.length <= 200) return guide.summary;
  return `${guide.summary.slice(0, 200).replace(/\s+\S*$/, '')}…`;
}

/** Every error code the API declares (lib/errors.ts) must have its anchor on the errors page. */
export function missingErrorAnchors(ids: readonly string[]): string[] {
  const present = new Set(ids);
  return ERROR_CODES.filter((code) => !present.has(code));
}

/** Tags that load something: what a page may name only from its own origin. */
const LOADS =
  /<(script|link|img|iframe|source|video|audio|object|embed)\b[^>]*?\b(src|href|srcset|data)\s*=\s*["']?([^"'\s>]+)/gi;

/** What a page would load from another origin (a CDN, a font service): the build refuses it. */
export function externalLoads(html: string): string[] {
  const found: string[] = [];
  for (const [, tag, , url = ''] of html.matchAll(LOADS)) {
    if (/^(?:[a-z][a-z0-9+.-]*:)?\/\//i.test(url) && !url.startsWith(BUILD_BASE_URL)) found.push(`<${tag}> ${url}`);
  }
  for (const [, url = ''] of html.matchAll(/@import\s+(?:url\()?["']?([^"')\s;]+)/gi)) found.push(`@import ${url}`);
  for (const [, url = ''] of html.matchAll(/url\(\s*["']?((?:https?:)?\/\/[^"')\s]+)/gi)) found.push(`url(${url})`);
  return found;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`${basename(command)} ${args.join(' ')} failed (${result.status}): ${result.stderr.slice(-2000)}`);
  }
  return result.stdout;
}

/**
 * The API reference: the document the API serves (built in-process from its routes, with
 * BUILD_BASE_URL as its public address), rendered by `redocly build-docs`, its inline scripts and
 * styles moved to files so that the pages' policy allows scripts and styles from this origin only.
 */
function buildReference(site: string): void {
  const work = mkdtempSync(join(tmpdir(), 'valise-docs-'));
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PUBLIC_BASE_URL: BUILD_BASE_URL,
      // Offline: no telemetry, no update check.
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_COLOR: '1',
    };
    delete env.DOCS_BASE_URL;
    const document = join(work, 'openapi.json');
    writeFileSync(document, run(process.execPath, ['--import', 'tsx', 'sdk/scripts/print-openapi.ts'], env));
    const output = join(work, 'reference.html');
    run(
      join(ROOT, 'node_modules/.bin/redocly'),
      [
        'build-docs',
        document,
        // Redoc's own scripts in the page, not from Redocly's CDN.
        '--inlineBundle',
        // Its script addresses its sections under its page, as /docs/reference#/<section>.
        `--openapi.routingBasePath=/docs/${REFERENCE_PAGE}`,
        '--output',
        output,
        '--title',
        'Valise API reference',
      ],
      env,
    );
    // After the theme's styles: its colours that miss AA contrast (web/docs-reference.css). The
    // prerendered links name the sections as if the page were the site's root (/webhooks): they lead
    // where its script takes a click, /docs/reference#/webhooks.
    const page = selfContained(readFileSync(output, 'utf8'), site)
      .replace('</head>', '<link rel="stylesheet" href="/assets/docs-reference.css"></head>')
      .replace(/\bhref="\/(?!docs\/|assets\/)([^"]*)"/g, `href="/docs/${REFERENCE_PAGE}#/$1"`);
    writeFileSync(join(site, `${REFERENCE_PAGE}.html`), page);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Moves a page's inline scripts and styles to files of the site, named by their order. */
function selfContained(html: string, site: string): string {
  let scripts = 0;
  let styles = 0;
  const withScripts = html.replace(
    /<script\b([^>]*)>([\s\S]*?)<\/script>/gi,
    (whole, attributes: string, body: string) => {
      if (/\bsrc\s*=/i.test(attributes) || body.trim() === '') return whole;
      // JSON data blocks are not run: they stay where the page's script looks for them.
      if (/\btype\s*=\s*["']?application\/(?:ld\+)?json/i.test(attributes)) return whole;
      const file = `${REFERENCE_PAGE}-${++scripts}.js`;
      writeFileSync(join(site, file), body);
      return `<script${attributes} src="/docs/${file}"></script>`;
    },
  );
  return withScripts.replace(/<style\b([^>]*)>([\s\S]*?)<\/style>/gi, (_whole, attributes: string, body: string) => {
    const file = `${REFERENCE_PAGE}-${++styles}.css`;
    writeFileSync(join(site, file), body);
    return `<link rel="stylesheet" href="/docs/${file}"${attributes}>`;
  });
}

export function buildDocs(): { guides: number } {
  const site = DOCS_SITE.replace(/\/+$/, '');
  const next = `${site}.next`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  const names = readdirSync(SOURCE)
    .filter((file) => file.endsWith('.md'))
    .map((file) => file.slice(0, -3))
    .sort();
  const sources = new Map(names.map((name) => [name, readFileSync(join(SOURCE, `${name}.md`), 'utf8')]));
  // Twice: the first pass finds every guide's anchors, which the second links mentions of sections to.
  const firstPass = new Map(names.map((name) => [name, new Set<string>()]));
  const anchors = new Map(
    names.map((name) => [name, new Set(renderGuide(name, sources.get(name) ?? '', firstPass).ids)]),
  );
  const guides = names.map((name) => renderGuide(name, sources.get(name) ?? '', anchors));
  for (const guide of guides)
    writeFileSync(join(next, `${guide.name}.html`), docsPage(guide.title, guide.html, guide.name));
  writeFileSync(join(next, 'index.html'), indexPage(guides));

  const errors = guides.find((guide) => guide.name === ERRORS_GUIDE);
  const missing = missingErrorAnchors(errors?.ids ?? []);
  if (missing.length > 0) throw new Error(`docs/${ERRORS_GUIDE}.md has no section for: ${missing.join(', ')}`);

  buildReference(next);
  for (const file of readdirSync(next).filter((f) => f.endsWith('.html') || f.endsWith('.css'))) {
    const external = externalLoads(readFileSync(join(next, file), 'utf8'));
    if (external.length > 0) throw new Error(`${file} loads from another origin: ${external.join(', ')}`);
  }
  rmSync(site, { recursive: true, force: true });
  renameSync(next, site);
  return { guides: guides.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const { guides } = buildDocs();
  console.log(`build-docs: ${guides} guides and the API reference in dist/docs (${Date.now() - started} ms)`);
}
