import { DomainError } from '../errors.ts';
import { FAMILIES } from '../families.ts';
import type { Services } from '../services.ts';
import type { UploadTarget } from './receive.ts';
import { readUploadToken } from './tokens.ts';

/** The file an upload URL names, from its owning family: 404 for a bad token, 410 once expired. */
export async function resolveUpload(services: Services, token: string): Promise<UploadTarget> {
  const address = readUploadToken(services.keys.links, token);
  const uploads = FAMILIES.find((family) => family.uploads?.kind === address.kind)?.uploads;
  if (!uploads) throw new DomainError('not_found', 'No such upload URL.');
  return uploads.target(services, address);
}
