import { openIntakeDownload, resolveIntakeDownload } from '../../../lib/intakes/documents.ts';
import { defineRoute } from '../../route.ts';
import {
  fileResponse,
  holdDownloadSlot,
  limitDuration,
  linkTokenParams,
  requestedRange,
  streamedDownload,
} from '../shares/download.ts';

export const downloadRoute = defineRoute({
  method: 'GET',
  path: '/v1/intake-downloads/{token}',
  options: {
    id: 'intakes.openDownload',
    plugins: { valise: { openapi: { errors: [403, 410, 416], binary: [200, 206] } } },
    auth: false,
    description: 'Download an intake document\u2019s file',
    notes:
      'The `download_url` of an intake document\u2019s file: valid 300 seconds, then 403. End-to-end documents send ' +
      'the encrypted VAL1 blob, to decrypt with the intake\u2019s private key; server-mode documents send the file, ' +
      'decrypted. Supports a single HTTP Range. Stored content altered in storage: 410 `not_found` with `reason` ' +
      '`content_corrupt` before any byte, or the response is cut off before its end.',
    tags: ['api', 'intakes'],
    validate: { params: linkTokenParams },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await resolveIntakeDownload(services, request.params.token);
    const range = requestedRange(request, target.file.size);
    // The same bounds as public transfer downloads: a slot per address and per intake.
    holdDownloadSlot(request, { id: target.intake.id, kind: 'intake' });
    const content = await openIntakeDownload(services, target, range);
    limitDuration(request, services.config.transfers.downloads);
    return fileResponse(h, content, {
      size: target.file.size,
      range,
      name: target.file.name,
      // End-to-end documents send their ciphertext: no type of the plaintext applies.
      mimeType: target.intake.encryption_mode === 'e2e_asym' ? 'application/octet-stream' : target.file.mime_type,
    });
  },
});
