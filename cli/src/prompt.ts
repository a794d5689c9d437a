import { createInterface } from 'node:readline/promises';
import { ValiseError } from '../../sdk/src/index.ts';

// Interactive questions, only ever asked on a terminal: scripts get a clear
// error naming the flag to pass instead.

export function canPrompt(json: boolean): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY) && !json;
}

export async function ask(question: string): Promise<string> {
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await readline.question(question)).trim();
  } finally {
    readline.close();
  }
}

/** All of stdin, trimmed (for `valise login < key.txt`). */
export async function readStdin(): Promise<string> {
  return (await stdinText()).trim();
}

async function stdinText(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Runs `call` with the given MFA code; when the API says `mfa_required` and nobody gave a code, asks
 * for one on a terminal and runs it again. Otherwise the error's hint names --mfa-code.
 */
export async function withMfa<T>(
  mfaCode: string | undefined,
  json: boolean,
  call: (mfaCode: string | undefined) => Promise<T>,
): Promise<T> {
  try {
    return await call(mfaCode);
  } catch (error) {
    if (!(error instanceof ValiseError) || error.code !== 'mfa_required' || mfaCode || !canPrompt(json)) throw error;
    const code = await ask('This needs a verification code from your authenticator app. Code: ');
    return call(code);
  }
}

/**
 * A transfer password from its flag: `-` reads it from stdin (its first line), so it stays out of
 * the process list and the shell history.
 */
export async function passwordFrom(flag: string | undefined): Promise<string | undefined> {
  if (flag !== '-') return flag;
  return (await stdinText()).split(/\r?\n/)[0] ?? '';
}
