import { randomBytes } from 'node:crypto';
import {
  type CreatedTransfer,
  type CreateTransferParams,
  DEFAULT_SEGMENT_SIZE,
  encryptedSize,
  type FileSource,
  type SendSession,
} from '../../sdk/src/index.ts';

// The SDK's transfers.send creates the session (and, in e2e mode, the link
// key) inside one call, and hands it out only when an upload fails. A process
// killed mid-upload never sees it, so the CLI creates the transfer and the
// session itself, saves them, and only then uploads with transfers.resume.
// This mirrors sdk/src/send.ts (createAndSend): same key sizes, same link.

const KEY_SIZE = 32;
const NONCE_PREFIX_SIZE = 7;

export type Mode = 'server' | 'e2e';

/** The create body: in e2e mode each size is that of the encrypted blob. */
export function createBody(
  sources: FileSource[],
  mode: Mode,
  fields: Omit<CreateTransferParams, 'files' | 'encryption_mode'>,
): CreateTransferParams {
  return {
    ...fields,
    encryption_mode: mode,
    files: sources.map((source) => ({
      name: source.name,
      size: mode === 'e2e' ? encryptedSize(source.size, DEFAULT_SEGMENT_SIZE) : source.size,
      ...(source.type ? { mime_type: source.type } : {}),
    })),
  };
}

export function sessionFor(created: CreatedTransfer, sources: FileSource[], mode: Mode): SendSession {
  const linkKey = mode === 'e2e' ? randomBytes(KEY_SIZE) : null;
  return {
    mode,
    transfer: created.transfer,
    shareUrl: linkKey ? withKey(created.share_url, linkKey) : created.share_url,
    files: created.upload_urls.map((entry, index) => ({
      fileId: entry.file_id,
      name: entry.name,
      url: entry.url,
      storedSize: entry.size,
      plaintextSize: sources[index]?.size ?? 0,
    })),
    e2e: linkKey
      ? {
          linkKey: linkKey.toString('base64url'),
          noncePrefixes: sources.map(() => randomBytes(NONCE_PREFIX_SIZE).toString('base64url')),
          segmentSize: DEFAULT_SEGMENT_SIZE,
        }
      : null,
  };
}

/** The share link with the key in its fragment (`#k=`), which browsers never send to a server. */
function withKey(shareUrl: string, key: Buffer): string {
  const url = new URL(shareUrl);
  url.hash = `k=${key.toString('base64url')}`;
  return url.toString();
}
