import type { StoredFile } from '../db/queries/stored-files.ts';
import { DomainError } from '../errors.ts';
import { type Chunk, uploadOffset } from './receive.ts';
import type { BodyChecksum } from './tus.ts';

/**
 * What a tus body sent at `offset` (PATCH, or POST with creation-with-upload at 0) carries, as
 * receiveUpload reads it: from the stored offset (or 0, to start again, as a PUT may) to the file's
 * end, or to the last part boundary it reaches, its bytes past that boundary read and dropped (the
 * answered `Upload-Offset` is where its client goes on). `length` is its Content-Length, absent for
 * a chunked body, which must then carry the rest of the file. Refused before a byte is read: an
 * offset that is not the stored one (409), a body past the declared length (413), a body that
 * reaches no part boundary and not the end (400: nothing of it could be committed).
 */
export function tusChunk(
  file: StoredFile,
  partBytes: number,
  offset: number,
  length: number | undefined,
  checksum: BodyChecksum | undefined,
  /** Where this process's tus session of the file expects its next chunk, ahead of what is committed. */
  ahead?: number,
): Chunk {
  const stored = ahead ?? uploadOffset(file);
  if (offset !== stored && offset !== 0) {
    throw new DomainError(
      'validation_error',
      `This file has ${stored} bytes stored: Upload-Offset must be ${stored}.`,
      {
        param: 'Upload-Offset',
        kind: 'conflict',
        details: { upload_offset: stored },
      },
    );
  }
  const end = length === undefined ? file.size : offset + length;
  if (end > file.size) {
    throw new DomainError(
      'validation_error',
      `The body goes past the file's declared length (${file.size} bytes, ${file.size - offset} from offset ${offset}).`,
      { param: 'Content-Length', kind: 'too_large' },
    );
  }
  // The whole file in one body: what a PUT without Content-Range sends (an empty file included).
  // A finished file takes nothing more and answers its end, as a repeated PUT does.
  if ((offset === 0 && end === file.size) || file.upload_state === 'uploaded') return { length, checksum };
  const kept = end === file.size ? end : Math.floor(end / partBytes) * partBytes;
  if (kept <= offset) {
    throw new DomainError(
      'validation_error',
      `A body must reach the end of the file or a multiple of part_size (${partBytes} bytes): send chunks of a multiple of ${partBytes} bytes.`,
      { param: 'Content-Length' },
    );
  }
  return { range: { start: offset, end: kept, total: file.size }, length, extra: end - kept, checksum };
}
