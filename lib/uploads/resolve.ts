import { DomainError } from '../errors.ts';
import { FAMILIES } from '../families.ts';
import type { Services } from '../services.ts';
import type { UploadTarget } from './receive.ts';
import { readUploadToken } from './tokens.ts';

/** The file an upload URL names, and until when the URL is valid (tus `Upload-Expires`). */
export type ResolvedUpload = UploadTarget & { expiresAt: Date };

/** The file an upload URL names, from its owning family: 404 for a bad token, 410 once expired. */
export async function resolveUpload(services: Services, token: string): Promise<ResolvedUpload> {
  const { expiresAt, ...address } = readUploadToken(services.keys.links, token);
  const uploads = FAMILIES.find((family) => family.uploads?.kind === address.kind)?.uploads;
  if (!uploads) throw new DomainError('not_found', 'No such upload URL.');
  return { ...(await uploads.target(services, address)), expiresAt };
}
