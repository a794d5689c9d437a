import { DomainError } from '../../../lib/errors.ts';
import { openIntakeDownload, resolveIntakeDownload } from '../../../lib/intakes/documents.ts';
import { clientIp } from '../../client-ip.ts';
import { parseRangeHeader } from '../../http/ranges.ts';
import { defineRoute } from '../../route.ts';
import { headerOf } from '../../types.ts';
import {
  contentDisposition,
  DOWNLOAD_SAFETY_HEADERS,
  endOfDownload,
  limitDuration,
  linkTokenParams,
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
      'decrypted. Supports a single HTTP Range.',
    tags: ['api', 'intakes'],
    validate: { params: linkTokenParams },
    timeout: { socket: false },
    response: { ranges: false },
    ext: endOfDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await resolveIntakeDownload(services, request.params.token);
    const size = target.file.size;
    const range = parseRangeHeader(headerOf(request, 'range'), size);
    if (range === 'unsatisfiable') {
      throw new DomainError('validation_error', 'The requested range is outside the file.', {
        param: 'Range',
        kind: 'range_not_satisfiable',
        contentSize: size,
      });
    }
    // The same bounds as public transfer downloads: a slot per address and per intake.
    const slot = services.downloads.gate.enter(clientIp(request, services.config), target.intake.id);
    if (!slot.ok) {
      throw new DomainError('rate_limited', 'Too many downloads at once. Retry in a moment.', {
        retryAfterSeconds: 5,
        details: { reason: slot.reason },
      });
    }
    let content: Awaited<ReturnType<typeof openIntakeDownload>>;
    try {
      content = await openIntakeDownload(services, target, range ?? undefined);
    } catch (error) {
      slot.release();
      throw error;
    }
    content.once('close', slot.release);
    limitDuration(request, services.config.transfers.downloads);
    const response = h
      .response(content)
      .code(range ? 206 : 200)
      .compressed('identity')
      .header(
        'Content-Type',
        target.intake.encryption_mode === 'e2e_asym' ? 'application/octet-stream' : target.file.mime_type,
      )
      .header('Content-Disposition', contentDisposition(target.file.name))
      .header('Accept-Ranges', 'bytes')
      .header('Cache-Control', 'private, no-store')
      .header('Content-Length', String(range ? range.end - range.start + 1 : size));
    if (range) response.header('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    for (const [name, value] of Object.entries(DOWNLOAD_SAFETY_HEADERS)) response.header(name, value);
    return response;
  },
});
