import { randomUUID } from 'node:crypto';
import test from 'ava';
import { loadConfig } from '../lib/config.ts';
import { formatBytes } from '../lib/format.ts';
import { createMailer } from '../lib/mail/mailer.ts';
import { approvalDecisionMail, approvalRequestMail, shareLinkMail } from '../lib/mail/templates.ts';

// Sends through the test stack's SMTP capture (maildev, SMTP_PORT) and reads
// each message back through its REST API (MAIL_UI_PORT, under /api). Every
// test mails its own unique address and deletes what it received, so runs in
// parallel never see each other's mail. maildev sanitises the `html` it
// returns, which would hide an escaping bug: HTML assertions use the raw
// message source instead.

const config = loadConfig();
const mailer = createMailer(config);
const api = `http://127.0.0.1:${config.smtp.uiPort}/api`;
test.after.always(() => mailer.close());

const SCRIPT_TITLE = '<script>alert("x")</script> Q3 "report" & résumé 📎 東京';
const SHARE_URL = 'http://127.0.0.1:8080/s/AbC123?x=1&y=2';

type Captured = {
  id: string;
  subject: string;
  text?: string;
  to: Array<{ address: string }>;
  envelope: { to: Array<{ address: string }> };
  headers: Record<string, string | string[]>;
};

function recipient(label: string): string {
  return `${label}-${randomUUID()}@valise.test`;
}

/** Waits for the one message sent to `address`, returns it with its raw source, and deletes it. */
async function received(address: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await fetch(`${api}/email?to.address=${encodeURIComponent(address)}`);
    const emails = (await response.json()) as Captured[];
    if (emails.length > 1) throw new Error(`expected one message to ${address}, got ${emails.length}`);
    const email = emails[0];
    if (email) {
      const source = await (await fetch(`${api}/email/${email.id}/source`)).text();
      await fetch(`${api}/email/${email.id}`, { method: 'DELETE' });
      return { email, source, ...parseSource(source) };
    }
    if (Date.now() > deadline) throw new Error(`no message to ${address} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Unfolded header lines, and the decoded text and HTML parts, of a raw message. */
function parseSource(source: string) {
  const [head = '', ...rest] = source.split(/\r?\n\r?\n/);
  const headerLines = head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/);
  const body = rest.join('\r\n\r\n');
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(head)?.[1];
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [];
  const part = (type: string) => {
    const found = parts.find((p) => new RegExp(`content-type:\\s*${type}`, 'i').test(p));
    if (!found) return undefined;
    const [partHead = '', ...partBody] = found.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    const content = partBody.join('\r\n\r\n');
    const encoding = /content-transfer-encoding:\s*([\w-]+)/i.exec(partHead)?.[1]?.toLowerCase();
    let decoded = content;
    if (encoding === 'base64') decoded = Buffer.from(content, 'base64').toString('utf8');
    if (encoding === 'quoted-printable') {
      const bytes = content
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
      decoded = Buffer.from(bytes, 'latin1').toString('utf8');
    }
    // SMTP lines end in CRLF; compare with what the templates wrote.
    return decoded.replace(/\r\n/g, '\n').replace(/\n$/, '');
  };
  return { headerLines, text: part('text/plain'), html: part('text/html') };
}

const headerNames = (lines: string[]) => lines.map((line) => line.split(':')[0]?.toLowerCase());

test('formatBytes uses binary units with at most one decimal', (t) => {
  t.is(formatBytes(0), '0 B');
  t.is(formatBytes(1023), '1023 B');
  t.is(formatBytes(1024), '1 KiB');
  t.is(formatBytes(1536), '1.5 KiB');
  t.is(formatBytes(1.5 * 1024 * 1024), '1.5 MiB');
  t.is(formatBytes(20 * 1024 ** 3), '20 GiB');
  t.is(formatBytes(3 * 1024 ** 4 + 1), '3 TiB');
});

test('formatBytes rounds up into the next unit rather than showing 1024, and refuses non-sizes', (t) => {
  t.is(formatBytes(1024 * 1024 - 1), '1 MiB');
  t.is(formatBytes(1023.7), '1 KiB');
  t.is(formatBytes(1024 ** 6), '1024 PiB');
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY])
    t.throws(() => formatBytes(bad), { instanceOf: RangeError });
});

test('the share-link mail arrives with its subject, link and summary in text and HTML', async (t) => {
  const to = recipient('share');
  const message = shareLinkMail({
    to,
    senderName: 'Ada Lovelace',
    transferTitle: 'Q3 report',
    shareUrl: SHARE_URL,
    expiresAt: new Date('2026-05-14T10:00:00Z'),
    fileCount: 3,
    totalBytes: 1.5 * 1024 * 1024,
    message: 'Hello Bob,\r\nthe figures are in tab 2.',
  });
  const { messageId } = await mailer.send(message);
  t.regex(messageId, /^<.+@.+>$/);
  const { email, text, html, headerLines } = await received(to);
  t.deepEqual(
    email.to.map((a) => a.address),
    [to],
  );
  t.is(email.subject, 'Ada Lovelace sent you “Q3 report”');
  t.true(headerLines.includes('Auto-Submitted: auto-generated'));
  t.truthy(text);
  t.truthy(html);
  t.true(text?.includes(SHARE_URL));
  t.true(text?.includes('3 files, 1.5 MiB'));
  t.true(text?.includes('14 May 2026 at 10:00 UTC'));
  t.true(text?.includes('> Hello Bob,\n> the figures are in tab 2.'));
  // In HTML the & of the query string is escaped; the link resolves to the same URL.
  t.true(html?.includes(`href="${SHARE_URL.replace('&', '&amp;')}"`));
  t.true(html?.includes('3 files, 1.5 MiB'));
  t.true(html?.includes('Hello Bob,<br>\nthe figures are in tab 2.'));
});

test('HTML-looking titles, names and messages are escaped, and unicode survives', async (t) => {
  const to = recipient('escape');
  await mailer.send(
    shareLinkMail({
      to,
      senderName: '<b>Mallory</b> "the boss"',
      transferTitle: SCRIPT_TITLE,
      shareUrl: SHARE_URL,
      expiresAt: new Date('2026-05-14T10:00:00Z'),
      fileCount: 1,
      totalBytes: 10,
      message: '<img src=x onerror="alert(1)">\n\'quoted\'',
    }),
  );
  const { email, html, text } = await received(to);
  t.is(email.subject, `<b>Mallory</b> "the boss" sent you “${SCRIPT_TITLE}”`);
  t.truthy(html);
  for (const raw of ['<script>', '</script>', '<b>', '<img', 'onerror="']) {
    t.false(html?.includes(raw), `raw ${raw} in the HTML`);
  }
  t.true(
    html?.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Q3 &quot;report&quot; &amp; résumé 📎 東京'),
  );
  t.true(html?.includes('&lt;b&gt;Mallory&lt;/b&gt; &quot;the boss&quot;'));
  t.true(html?.includes('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;<br>\n&#39;quoted&#39;'));
  // Plain text is not HTML: the title reads as typed.
  t.true(text?.includes(SCRIPT_TITLE));
  t.true(text?.includes('1 file, 10 B'));
});

test('a CR/LF in a title or name cannot add headers or recipients', async (t) => {
  const [to, to2] = [recipient('inject'), recipient('inject')];
  const evil = `Invoice\r\nBcc: victim-${randomUUID()}@valise.test\r\nX-Injected: yes\r\n\r\n<h1>body</h1>`;
  await mailer.send(
    shareLinkMail({
      to,
      senderName: 'Eve\nX-Also-Injected: yes',
      transferTitle: evil,
      shareUrl: SHARE_URL,
      expiresAt: new Date('2026-05-14T10:00:00Z'),
      fileCount: 1,
      totalBytes: 1,
    }),
  );
  await mailer.send(
    approvalRequestMail({
      to: to2,
      transferTitle: evil,
      requesterEmail: 'a@b.c\r\nCc: x@y.z',
      approveUrlHint: 'POST /x\r\nX-Injected: yes',
    }),
  );
  for (const address of [to, to2]) {
    const { email, headerLines } = await received(address);
    const names = headerNames(headerLines);
    t.false(names.includes('bcc'));
    t.false(names.includes('cc'));
    t.false(names.includes('x-injected'));
    t.false(names.includes('x-also-injected'));
    t.is(names.filter((n) => n === 'subject').length, 1);
    t.deepEqual(
      email.envelope.to.map((a) => a.address),
      [address],
    );
    t.false(email.subject.includes('\n') || email.subject.includes('\r'));
    t.regex(email.subject, /Invoice Bcc: victim-.* X-Injected: yes <h1>body<\/h1>/);
  }
});

test('the approval request names the requester and where to decide', async (t) => {
  const to = recipient('approver');
  await mailer.send(
    approvalRequestMail({
      to,
      transferTitle: SCRIPT_TITLE,
      requesterEmail: 'bob@valise.test',
      approveUrlHint: 'POST /v1/transfers/tr_123/approve',
    }),
  );
  const { email, text, html } = await received(to);
  t.is(email.subject, `Approval needed: “${SCRIPT_TITLE}”`);
  t.true(text?.includes('bob@valise.test wants to send'));
  t.true(text?.includes('POST /v1/transfers/tr_123/approve'));
  t.true(html?.includes('<code>POST /v1/transfers/tr_123/approve</code>'));
  t.false(html?.includes('<script>'));

  // A URL hint becomes a link.
  const linked = recipient('approver-link');
  await mailer.send(
    approvalRequestMail({
      to: linked,
      transferTitle: 'Plans',
      requesterEmail: 'bob@valise.test',
      approveUrlHint: 'http://127.0.0.1:8080/approvals/tr_123',
    }),
  );
  t.true((await received(linked)).html?.includes('href="http://127.0.0.1:8080/approvals/tr_123"'));
});

test('approval decisions say which, with the reviewer note escaped (or none)', async (t) => {
  const approved = recipient('approved');
  await mailer.send(
    approvalDecisionMail({
      to: approved,
      transferTitle: 'Plans',
      decision: 'approved',
      note: 'Fine by me </p><a href=x>',
    }),
  );
  const yes = await received(approved);
  t.is(yes.email.subject, 'Transfer approved: “Plans”');
  t.true(yes.text?.includes('“Plans” was approved.'));
  t.true(yes.text?.includes('> Fine by me </p><a href=x>'));
  t.true(yes.html?.includes('Fine by me &lt;/p&gt;&lt;a href=x&gt;'));
  t.false(yes.html?.includes('<a href=x>'));

  const rejected = recipient('rejected');
  await mailer.send(
    approvalDecisionMail({ to: rejected, transferTitle: SCRIPT_TITLE, decision: 'rejected', note: null }),
  );
  const no = await received(rejected);
  t.is(no.email.subject, `Transfer rejected: “${SCRIPT_TITLE}”`);
  t.true(no.text?.includes('was rejected: it will not be shared.'));
  t.false(no.text?.includes('note'));
  t.false(no.html?.includes('<script>'));
});

test('a recipient that is not one plain address, and a non-http share URL, are refused', async (t) => {
  const base = {
    senderName: 'A',
    transferTitle: 'T',
    shareUrl: SHARE_URL,
    expiresAt: new Date(),
    fileCount: 1,
    totalBytes: 1,
  };
  for (const to of ['a@b.c, d@e.f', 'a@b.c\r\nBcc: d@e.f', 'Name <a@b.c>', 'nobody', '']) {
    t.throws(() => shareLinkMail({ ...base, to }), { instanceOf: TypeError }, JSON.stringify(to));
    await t.throwsAsync(mailer.send({ to, subject: 's', text: 't', html: 'h' }), { instanceOf: TypeError });
  }
  for (const shareUrl of ['javascript:alert(1)', 'data:text/html,x', '/s/abc']) {
    t.throws(() => shareLinkMail({ ...base, to: 'a@b.c', shareUrl }), { instanceOf: TypeError });
  }
});

test('verify() succeeds against the capture server and fails against a closed port', async (t) => {
  await t.notThrowsAsync(mailer.verify());
  const closed = createMailer({ smtp: { ...config.smtp, port: 1 } }, { timeoutMs: 2_000 });
  try {
    await t.throwsAsync(closed.verify());
  } finally {
    closed.close();
  }
});
