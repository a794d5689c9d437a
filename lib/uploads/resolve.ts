import { DomainError } from '../errors.ts';
import { FAMILIES } from '../families.ts';
import type { Services } from '../services.ts';
import type { UploadTarget } from './receive.ts';
import { readUploadToken } from './tokens.ts';

/** The file an upload URL names, and until when the URL is valid (tus `Upload-Expires`). */
export type ResolvedUpload = UploadTarget & { expiresAt: Date };

/** The file an upload URL names, from its owning family: 404 for a bad token, 410 once expired. */
export async function resolveUpload(services: Services, token: string): Promise<ResolvedUpload> {
  return resolveAddress(services, readUploadToken(services.keys.links, token));
}

async function resolveAddress(
  services: Services,
  { expiresAt, ...address }: ReturnType<typeof readUploadToken>,
): Promise<ResolvedUpload> {
  const uploads = FAMILIES.find((family) => family.uploads?.kind === address.kind)?.uploads;
  if (!uploads) throw new DomainError('not_found', 'No such upload URL.');
  return { ...(await uploads.target(services, address)), expiresAt };
}

/**
 * The file an upload URL names as stored: once the tus chunks this process answered ahead of
 * storing them are committed (or failed), so its offset is what a client can resume from.
 */
export async function resolveStoredUpload(services: Services, token: string): Promise<ResolvedUpload> {
  const address = readUploadToken(services.keys.links, token);
  await services.uploadSessions.settled(address.file);
  return resolveAddress(services, address);
}

/**
 * For a tus PATCH: the file, and `ahead`, where this process's session of it expects the next chunk
 * (lib/uploads/upload-sessions.ts), when it has one. The session is read before the file: what a
 * session seen then had answered may not be committed in the row read after it, but a session that
 * ended before then had committed everything it answered.
 */
export async function resolveTusUpload(
  services: Services,
  token: string,
): Promise<ResolvedUpload & { ahead: number | undefined }> {
  const address = readUploadToken(services.keys.links, token);
  const ahead = services.uploadSessions.offset(address.file);
  return { ...(await resolveAddress(services, address)), ahead };
}
