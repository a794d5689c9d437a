import { formatBytes } from '../format.ts';
import type { ApprovalDecision } from '../vocabulary.ts';

// The mail Valise sends, as plain text and simple HTML. Titles, names, notes
// and messages come from users: in the HTML every one is escaped; single-line
// values (subject included) lose control, line-break and bidi-override
// characters, so none can add a header, fake a line of our text, or reorder
// what is displayed; multi-line ones keep their line breaks, quoted as theirs.

export type MailMessage = { to: string; subject: string; text: string; html: string };

export type ShareLinkMailInput = {
  to: string;
  senderName: string;
  transferTitle: string;
  shareUrl: string;
  expiresAt: Date;
  fileCount: number;
  totalBytes: number;
  /** The sender's note to the recipient. */
  message?: string | null | undefined;
  /** A caution about the content, such as files too large to be scanned for malware. */
  warning?: string | null | undefined;
};

export function shareLinkMail(input: ShareLinkMailInput): MailMessage {
  const sender = singleLine(input.senderName, 100) || 'Someone';
  const title = singleLine(input.transferTitle, 150) || 'Untitled transfer';
  const url = httpUrl(input.shareUrl);
  const files = `${input.fileCount} ${input.fileCount === 1 ? 'file' : 'files'}, ${formatBytes(input.totalBytes)}`;
  const expires = formatDate(input.expiresAt);
  const message = multiLine(input.message);
  const warning = input.warning ? singleLine(input.warning, 300) : '';
  return {
    to: mailbox(input.to),
    subject: subject(`${sender} sent you “${title}”`),
    text: [
      `${sender} sent you “${title}” with Valise: ${files}.`,
      ...(message ? ['', `Their message:`, quoteText(message)] : []),
      ...(warning ? ['', `Warning: ${warning}`] : []),
      '',
      `Download: ${url}`,
      '',
      `The link expires on ${expires}.`,
      FOOTER_TEXT,
    ].join('\n'),
    html: page(title, [
      `<p><strong>${escapeHtml(sender)}</strong> sent you <strong>“${escapeHtml(title)}”</strong> with Valise: ${escapeHtml(files)}.</p>`,
      message ? `<p>Their message:</p>${quoteHtml(message)}` : '',
      warning ? `<p><strong>Warning:</strong> ${escapeHtml(warning)}</p>` : '',
      `<p><a href="${escapeHtml(url)}">Download the files</a></p>`,
      `<p>Or copy this link: ${escapeHtml(url)}</p>`,
      `<p>The link expires on ${escapeHtml(expires)}.</p>`,
      FOOTER_HTML,
    ]),
  };
}

export type ApprovalRequestMailInput = {
  to: string;
  transferTitle: string;
  requesterEmail: string;
  /** Where to decide: a URL, or an API call such as `POST /v1/transfers/<id>/approve`. */
  approveUrlHint: string;
};

export function approvalRequestMail(input: ApprovalRequestMailInput): MailMessage {
  const title = singleLine(input.transferTitle, 150) || 'Untitled transfer';
  const requester = singleLine(input.requesterEmail, 254);
  const hint = singleLine(input.approveUrlHint, 500);
  const link = asHttpUrl(hint);
  return {
    to: mailbox(input.to),
    subject: subject(`Approval needed: “${title}”`),
    text: [
      `${requester} wants to send “${title}”. It will not be shared until it is approved.`,
      '',
      `To approve or reject it: ${hint}`,
      FOOTER_TEXT,
    ].join('\n'),
    html: page(title, [
      `<p>${escapeHtml(requester)} wants to send <strong>“${escapeHtml(title)}”</strong>. It will not be shared until it is approved.</p>`,
      link
        ? `<p><a href="${escapeHtml(link)}">Approve or reject it</a></p>`
        : `<p>To approve or reject it: <code>${escapeHtml(hint)}</code></p>`,
      FOOTER_HTML,
    ]),
  };
}

export type ApprovalDecisionMailInput = {
  to: string;
  transferTitle: string;
  decision: ApprovalDecision;
  /** The reviewer's note, if any. */
  note?: string | null | undefined;
};

export function approvalDecisionMail(input: ApprovalDecisionMailInput): MailMessage {
  const title = singleLine(input.transferTitle, 150) || 'Untitled transfer';
  const note = multiLine(input.note);
  const outcome = input.decision === 'approved' ? 'was approved.' : 'was rejected: it will not be shared.';
  return {
    to: mailbox(input.to),
    subject: subject(`Transfer ${input.decision}: “${title}”`),
    text: [
      `Your transfer “${title}” ${outcome}`,
      ...(note ? ['', 'The reviewer’s note:', quoteText(note)] : []),
      FOOTER_TEXT,
    ].join('\n'),
    html: page(title, [
      `<p>Your transfer <strong>“${escapeHtml(title)}”</strong> ${escapeHtml(outcome)}</p>`,
      note ? `<p>The reviewer’s note:</p>${quoteHtml(note)}` : '',
      FOOTER_HTML,
    ]),
  };
}

export type ScanFailedMailInput = {
  to: string;
  transferTitle: string;
  fileName: string;
};

/** Tells a transfer's owner it was removed because a file could not be verified after its upload. */
export function scanFailedMail(input: ScanFailedMailInput): MailMessage {
  const title = singleLine(input.transferTitle, 150) || 'Untitled transfer';
  const file = singleLine(input.fileName, 255) || 'a file';
  const what =
    'could not be verified after its upload (its stored content no longer matches what was sent), so the ' +
    'transfer was removed and its files deleted. Nobody can download it. Send the files again in a new transfer.';
  return {
    to: mailbox(input.to),
    subject: subject(`Transfer removed: “${title}”`),
    text: [`In your transfer “${title}”, the file “${file}” ${what}`, FOOTER_TEXT].join('\n'),
    html: page(title, [
      `<p>In your transfer <strong>“${escapeHtml(title)}”</strong>, the file “${escapeHtml(file)}” ${escapeHtml(what)}</p>`,
      FOOTER_HTML,
    ]),
  };
}

export type RuleMailInput = {
  to: string;
  ruleName: string;
  /** One line saying what happened (lib/rules/describe.ts). */
  summary: string;
  /** From the rule's action_config, placeholders already filled in; defaults when absent. */
  subject?: string | undefined;
  body?: string | undefined;
  shareUrl?: string | null | undefined;
};

/** An `email_recipient` or `email_workspace` rule action. */
export function ruleMail(input: RuleMailInput): MailMessage {
  const summary = singleLine(input.summary, 300);
  const rule = singleLine(input.ruleName, 200);
  const body = multiLine(input.body);
  const url = input.shareUrl ? asHttpUrl(input.shareUrl) : null;
  return {
    to: mailbox(input.to),
    subject: subject(input.subject ? singleLine(input.subject, 200) : summary),
    text: [
      body ?? summary,
      ...(url ? ['', `Link: ${url}`] : []),
      '',
      `Sent by the automation rule “${rule}”.`,
      FOOTER_TEXT,
    ].join('\n'),
    html: page(rule, [
      body ? quoteHtml(body) : `<p>${escapeHtml(summary)}</p>`,
      url ? `<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>` : '',
      `<p>Sent by the automation rule “${escapeHtml(rule)}”.</p>`,
      FOOTER_HTML,
    ]),
  };
}

export type IntakeReceivedMailInput = {
  to: string;
  intakeTitle: string;
  documentId: string;
  clientReference: string | null;
  fileCount: number;
  /** End-to-end documents open only with the owner's private key: the mail says how. */
  endToEnd: boolean;
};

/**
 * Tells an intake's owner (or whom they named) that a document arrived. Never the file names or
 * metadata: they are the submitter's, and mail is not where they should travel.
 */
export function intakeReceivedMail(input: IntakeReceivedMailInput): MailMessage {
  const title = singleLine(input.intakeTitle, 150) || 'Untitled intake';
  const reference = input.clientReference ? singleLine(input.clientReference, 200) : '';
  const files = `${input.fileCount} ${input.fileCount === 1 ? 'file' : 'files'}`;
  const how = input.endToEnd
    ? `It is end-to-end encrypted: open it with your private key, \`valise intake get ${input.documentId}\`.`
    : `Fetch it with \`valise intake get ${input.documentId}\` once it has been scanned.`;
  return {
    to: mailbox(input.to),
    subject: subject(`New submission to “${title}”`),
    text: [
      `A new submission arrived on your Valise intake “${title}”: ${files}.`,
      ...(reference ? [`Reference: ${reference}`] : []),
      '',
      how,
      FOOTER_TEXT,
    ].join('\n'),
    html: page(title, [
      `<p>A new submission arrived on your Valise intake <strong>“${escapeHtml(title)}”</strong>: ${escapeHtml(files)}.</p>`,
      reference ? `<p>Reference: ${escapeHtml(reference)}</p>` : '',
      `<p>${escapeHtml(how)}</p>`,
    ]),
  };
}

const FOOTER_TEXT = '\n-- \nSent by Valise. If you did not expect this message, you can ignore it.';
const FOOTER_HTML =
  '<p style="color:#666;font-size:12px">Sent by Valise. If you did not expect this message, you can ignore it.</p>';

function page(title: string, body: string[]): string {
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.5;color:#222">',
    ...body.filter(Boolean),
    '</body></html>',
  ].join('\n');
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Safe in text and in quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

// C0 and C1 controls, DEL, line and paragraph separators, and the bidi
// embedding, override and isolate characters.
const UNSAFE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
const UNSAFE_BUT_NEWLINE = /(?!\n)[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** One line, whitespace collapsed, at most `max` characters. */
function singleLine(value: string, max: number): string {
  return truncate(value.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim(), max);
}

/** Line breaks kept (normalised to \n), other controls removed; null when empty. */
function multiLine(value: string | null | undefined, max = 4000): string | null {
  if (!value) return null;
  const text = value
    .replace(/\r\n?/g, '\n')
    .replace(UNSAFE_BUT_NEWLINE, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return text ? truncate(text, max) : null;
}

// By code points, so that an emoji is never cut in half.
function truncate(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length > max
    ? `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`
    : value;
}

function quoteText(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`.trimEnd())
    .join('\n');
}

function quoteHtml(text: string): string {
  const lines = text.split('\n').map(escapeHtml).join('<br>\n');
  return `<blockquote style="margin:0 0 1em;padding-left:1em;border-left:3px solid #ccc">${lines}</blockquote>`;
}

// Subjects stay short enough to read in a list; the title is already bounded.
function subject(value: string): string {
  return singleLine(value, 200);
}

/** Only http(s) links go into mail; anything else (javascript:, data:) is a bug upstream. */
function httpUrl(value: string): string {
  const url = asHttpUrl(value);
  if (!url) throw new TypeError('a share URL must be an absolute http(s) URL');
  return url;
}

function asHttpUrl(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

// One plain address: a comma or a display name in a user-supplied recipient
// would otherwise add recipients, and a line break a header.
const MAILBOX = /^[^\s\p{Cc}@<>()[\]\\,;:"]+@[^\s\p{Cc}@<>()[\]\\,;:"]+$/u;

export function mailbox(address: string): string {
  if (!MAILBOX.test(address) || address.length > 254) throw new TypeError('not a single e-mail address');
  return address;
}

const DATE = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });

function formatDate(date: Date): string {
  return `${DATE.format(date)} UTC`;
}

export type CoffreInvitationMailInput = {
  to: string;
  name: string | null;
  coffreName: string;
  access: 'view' | 'download' | 'upload';
  url: string;
  expiresAt: Date;
};

const ACCESS_WORDS = {
  view: 'see the files it holds',
  download: 'see and download the files it holds',
  upload: 'see, download and add files',
} as const;

/** Invites a vault member: the link is their credential, so the mail says it is personal. */
export function coffreInvitationMail(input: CoffreInvitationMailInput): MailMessage {
  const name = singleLine(input.coffreName, 150) || 'Untitled vault';
  const url = httpUrl(input.url);
  const until = formatDate(input.expiresAt);
  const greeting = input.name ? `Hello ${singleLine(input.name, 100)},` : 'Hello,';
  const what = `You were invited to the Valise vault “${name}”, where you can ${ACCESS_WORDS[input.access]}.`;
  const personal = `This link is personal: do not forward it. It works until ${until}.`;
  return {
    to: mailbox(input.to),
    subject: subject(`You were invited to the vault “${name}”`),
    text: [greeting, '', what, '', url, '', personal, FOOTER_TEXT].join('\n'),
    html: page(name, [
      `<p>${escapeHtml(greeting)}</p>`,
      `<p>${escapeHtml(what)}</p>`,
      `<p><a href="${escapeHtml(url)}">Open the vault</a></p>`,
      `<p>${escapeHtml(personal)}</p>`,
      FOOTER_HTML,
    ]),
  };
}
