import { coffreUploadTarget } from '../coffres/upload-target.ts';
import { intakeUploadTarget } from '../intakes/upload-target.ts';
import type { Services } from '../services.ts';
import { transferUploadTarget } from '../transfers/upload-target.ts';
import type { UploadTarget } from './receive.ts';
import { readUploadToken } from './tokens.ts';

/** The file an upload URL names, from its owner's module: 404 for a bad token, 410 once expired. */
export async function resolveUpload(services: Services, token: string): Promise<UploadTarget> {
  const address = readUploadToken(services.keys.links, token);
  switch (address.kind) {
    case 'transfer':
      return transferUploadTarget(services, address);
    case 'intake':
      return intakeUploadTarget(services, address);
    case 'coffre':
      return coffreUploadTarget(services, address);
  }
}
