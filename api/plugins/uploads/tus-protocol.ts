import type { Lifecycle, Request, ResponseObject, ResponseToolkit, RouteOptions } from '@hapi/hapi';
import type { ResolvedUpload } from '../../../lib/uploads/resolve.ts';
import {
  checkTusResumable,
  encodeUploadMetadata,
  httpDate,
  TUS_CHECKSUM_ALGORITHMS,
  TUS_EXTENSIONS,
  TUS_VERSION,
} from '../../../lib/uploads/tus.ts';
import { type AnyRequest, headerOf } from '../../types.ts';

// The tus headers every upload route shares (lib/uploads/tus.ts reads their values).

/**
 * Every answer of a tus route carries `Tus-Resumable`, errors included (rendered by then:
 * route-level extensions run after the server's, api/extensions/respond.ts); a 412 also says which
 * versions we speak.
 */
function tusAnswer(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
  const response = request.response as ResponseObject;
  if (!('isBoom' in response && response.isBoom)) {
    response.header('Tus-Resumable', TUS_VERSION);
    if (response.statusCode === 412) response.header('Tus-Version', TUS_VERSION);
  }
  return h.continue;
}

export const TUS_ROUTE_EXT: RouteOptions['ext'] = { onPreResponse: { method: tusAnswer } };

/** Refuses a tus request of another version (412); `required` where only tus uses the method. */
export function checkTusRequest(request: AnyRequest, required: boolean): void {
  checkTusResumable(headerOf(request, 'tus-resumable'), required);
}

/** What the server supports, as OPTIONS answers it (and a creation's `Tus-Max-Size`). */
export function discoveryHeaders(maxSize: number): Record<string, string> {
  return {
    'Tus-Version': TUS_VERSION,
    'Tus-Extension': TUS_EXTENSIONS.join(','),
    'Tus-Max-Size': String(maxSize),
    'Tus-Checksum-Algorithm': TUS_CHECKSUM_ALGORITHMS.join(','),
  };
}

/** The file's tus headers: until when its URL takes bytes, and its declared length, name and type. */
export function fileHeaders(
  target: ResolvedUpload,
): Record<'Upload-Length' | 'Upload-Expires' | 'Upload-Metadata', string> {
  const { file } = target;
  return {
    'Upload-Length': String(file.size),
    'Upload-Expires': httpDate(target.expiresAt),
    'Upload-Metadata': encodeUploadMetadata({
      filename: file.name,
      filetype: file.mime_type,
      name: file.name,
      type: file.mime_type,
    }),
  };
}

/** Sets `headers` on `response`. */
export function withHeaders(response: ResponseObject, headers: Record<string, string>): ResponseObject {
  for (const [name, value] of Object.entries(headers)) response.header(name, value);
  return response;
}
