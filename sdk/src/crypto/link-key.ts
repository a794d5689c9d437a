import { base64Decode, base64UrlEncode, utf8 } from '../encoding.ts';
import { ValiseError } from '../errors.ts';
import { KEY_SIZE } from './val1.ts';

// The key of an end-to-end transfer travels in its link's fragment, `#k=<base64url>`
// (docs/encryption.md). VAL1 wants one key per blob: a one-file transfer uses the
// link key itself, exactly as documented; with several files, each file's key is
// derived from the link key with HKDF-SHA256 and the file id as `info`, so one
// short link still opens every file and no two blobs share a key.

const FILE_KEY_INFO = 'valise-e2e-file-key:';

export function shareLinkWithKey(shareUrl: string, linkKey: Uint8Array): string {
  const url = new URL(shareUrl);
  url.hash = `k=${base64UrlEncode(linkKey)}`;
  return url.toString();
}

/** The link key from a share link's fragment, or null when it has none. */
export function linkKeyFrom(shareUrl: string): Uint8Array<ArrayBuffer> | null {
  const encoded = new URLSearchParams(new URL(shareUrl).hash.slice(1)).get('k');
  if (encoded === null) return null;
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64Decode(encoded);
  } catch (cause) {
    throw new ValiseError({ code: 'integrity_error', message: 'The key in the link is not base64url', cause });
  }
  if (key.length !== KEY_SIZE) {
    throw new ValiseError({ code: 'integrity_error', message: `The key in the link is ${key.length} bytes, not 32` });
  }
  return key;
}

export async function fileKey(
  linkKey: Uint8Array<ArrayBuffer>,
  fileId: string,
  fileCount: number,
): Promise<Uint8Array<ArrayBuffer>> {
  if (fileCount === 1) return linkKey;
  return deriveFileKey(linkKey, fileId);
}

/**
 * One file's VAL1 key from a key that opens several files (a transfer's link key, an intake
 * document's content key): HKDF-SHA256 with the file id in `info`, so no two blobs share a key.
 */
export async function deriveFileKey(key: Uint8Array<ArrayBuffer>, fileId: string): Promise<Uint8Array<ArrayBuffer>> {
  const base = await globalThis.crypto.subtle.importKey('raw', key, 'HKDF', false, ['deriveBits']);
  const bits = await globalThis.crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8.encode(FILE_KEY_INFO + fileId) },
    base,
    KEY_SIZE * 8,
  );
  return new Uint8Array(bits);
}
