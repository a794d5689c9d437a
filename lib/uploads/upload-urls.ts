import type { Services } from '../services.ts';
import { partSize } from './parts.ts';
import { signUploadToken, type UploadAddress } from './tokens.ts';

/**
 * One `upload_urls` entry, whoever owns the file: a signed, single-file URL that needs no API key,
 * valid until `deadline` (docs/transfers.md, "Uploads").
 */
export function uploadUrlEntry(
  services: Services,
  address: UploadAddress,
  file: { name: string; size: number },
  deadline: Date,
) {
  const token = signUploadToken(services.keys.links, address, deadline);
  return {
    file_id: address.file,
    name: file.name,
    size: file.size,
    method: 'PUT' as const,
    url: `${services.config.api.publicBaseUrl}/v1/uploads/${token}`,
    headers: { 'Content-Type': 'application/octet-stream' },
    expires_at: deadline,
    resumable: true,
    // The file's own: chunks end on a multiple of it (lib/uploads/parts.ts).
    part_size: partSize(file.size, services.config.transfers.uploads.maxParts),
  };
}
