import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';
import { type MailMessage, mailbox } from './templates.ts';

// Outgoing mail over SMTP (maildev captures it in dev and tests). Messages
// carry share links, so neither they nor their bodies are ever logged: the
// transport's logger stays off and errors carry only the server's answer.

export type MailerOptions = {
  /** TLS from the first byte (usually port 465). */
  secure?: boolean;
  /** Refuse to send unless the server upgrades with STARTTLS (otherwise it is used when offered). */
  requireTLS?: boolean;
  auth?: { user: string; pass: string };
  /** Bound on connecting, the greeting, and each wait for the server afterwards. */
  timeoutMs?: number;
};

export type Mailer = {
  send(message: MailMessage): Promise<{ messageId: string }>;
  /** Connects and says hello (and logs in, with auth): throws if the server is not usable. */
  verify(): Promise<void>;
  close(): void;
};

export function createMailer(config: Pick<Config, 'smtp'>, options: MailerOptions = {}): Mailer {
  const timeout = options.timeoutMs ?? 30_000;
  const transport = nodemailer.createTransport({
    // A few kept-open connections, rather than one per message from a busy worker.
    pool: true,
    maxConnections: 3,
    host: config.smtp.host,
    port: config.smtp.port,
    secure: options.secure ?? false,
    requireTLS: options.requireTLS ?? false,
    ...(options.auth ? { auth: options.auth } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    logger: false,
    debug: false,
    // Our messages are built in memory: never let content name a file or URL to fetch.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(message) {
      const info = await transport.sendMail({
        from: config.smtp.from,
        to: mailbox(message.to),
        subject: message.subject,
        text: message.text,
        html: message.html,
        // RFC 3834: out-of-office and other robots must not answer.
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
      return { messageId: info.messageId };
    },
    async verify() {
      await transport.verify();
    },
    close() {
      transport.close();
    },
  };
}
