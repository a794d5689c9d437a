import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../lib/config.ts';
import { eventually } from './api.ts';

// Reading what the SMTP capture (maildev) received, through its REST API.
const api = `http://127.0.0.1:${loadConfig().smtp.uiPort}/api`;

export type CapturedMail = { id: string; subject: string; text: string; to: Array<{ address: string }> };

export function uniqueAddress(label: string): string {
  return `${label}-${randomUUID()}@valise.test`;
}

export async function mailsTo(address: string): Promise<CapturedMail[]> {
  const response = await fetch(`${api}/email?to.address=${encodeURIComponent(address)}`);
  return (await response.json()) as CapturedMail[];
}

/** Waits for a message to `address` whose subject matches. */
export async function waitForMail(address: string, subject: RegExp, timeoutMs = 20_000): Promise<CapturedMail> {
  return eventually(async () => (await mailsTo(address)).find((mail) => subject.test(mail.subject)), timeoutMs);
}
