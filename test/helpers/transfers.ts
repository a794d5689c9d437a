import { randomBytes } from 'node:crypto';
import { eventually, type TestApi } from './api.ts';

// Driving transfers through the real API the way a client does.

export type UploadEntry = { file_id: string; url: string; size: number; name: string; part_size: number };

export async function createTransfer(api: TestApi, key: string, body: Record<string, unknown>) {
  const response = await api.call('POST', '/v1/transfers', { key, body });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body as {
    transfer: { id: string; short_code: string; expires_at: string };
    upload_urls: UploadEntry[];
    share_url: string;
  };
}

export async function put(url: string, body: Uint8Array, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'PUT',
    body,
    headers: { 'content-type': 'application/octet-stream', ...headers },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

export async function waitForTransfer(
  api: TestApi,
  key: string,
  id: string,
  done: (transfer: any) => boolean,
  timeoutMs = 60_000,
) {
  return eventually(async () => {
    const response = await api.call('GET', `/v1/transfers/${id}`, { key });
    return done(response.body) ? response.body : undefined;
  }, timeoutMs);
}

export async function links(api: TestApi, shortCode: string, body: Record<string, unknown> = {}) {
  return api.call('POST', `/v1/shares/${shortCode}/download-links`, { body });
}

export async function fetchBytes(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Random bytes with a readable marker inside, to look for plaintext in storage. */
export function content(size: number, marker = 'VALISE-PLAINTEXT-MARKER'): Buffer {
  const bytes = randomBytes(size);
  if (size >= marker.length * 2) bytes.write(marker, Math.floor(size / 2));
  return bytes;
}

export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';
