import { describe } from './arguments.ts';
import { InvalidArgumentError } from './errors.ts';
import type { FileSource } from './file-source.ts';
import { localFileSource } from './local-files.ts';

// What `transfers.send` uploads: anything that can stream its bytes from an
// offset, so an interrupted upload resumes without re-reading what was stored.

// Defined apart so that local-files.ts, which sources.ts calls, can name it without importing back.
export type { FileSource };

/**
 * What `transfers.send` takes for each file: a path or a `file:` URL (Node, Deno, Bun: read from
 * disk, streamed), a browser `File`, a `Blob` with a name, or any FileSource.
 */
export type SendFileInput = string | URL | File | { blob: Blob; name: string; type?: string } | FileSource;

const KINDS = 'a path, a file: URL, a Blob or File, or { name, size, stream } (a FileSource)';
const EXPECTED = `expected ${KINDS}`;

/** The files argument as FileSources, each checked (and each path opened) before any request. */
export async function toFileSources(files: unknown, param = 'files'): Promise<FileSource[]> {
  if (!Array.isArray(files)) {
    throw new InvalidArgumentError(param, `expected an array of files (${KINDS}); got ${describe(files)}`);
  }
  if (files.length === 0) throw new InvalidArgumentError(param, 'expected at least one file; got an empty array');
  const sources: FileSource[] = [];
  for (const [index, file] of files.entries()) sources.push(await toFileSource(file, `${param}[${index}]`));
  return sources;
}

/** One file input as a FileSource; `param` names it in errors (`files[2]`). */
export async function toFileSource(input: unknown, param: string): Promise<FileSource> {
  if (typeof input === 'string' || input instanceof URL) return localFileSource(input, param);
  if (typeof File !== 'undefined' && input instanceof File) {
    return checkedSource(blobSource(input, input.name, input.type), param);
  }
  if (input instanceof Blob) {
    throw new InvalidArgumentError(param, 'a Blob has no name: pass { blob, name } (or a File)');
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidArgumentError(param, `${EXPECTED}; got ${describe(input)}`);
  }
  const candidate = input as Partial<FileSource> & { blob?: unknown; type?: unknown };
  if ('blob' in candidate) {
    if (!(candidate.blob instanceof Blob)) {
      throw new InvalidArgumentError(`${param}.blob`, `expected a Blob; got ${describe(candidate.blob)}`);
    }
    const type = typeof candidate.type === 'string' ? candidate.type : candidate.blob.type;
    return checkedSource(blobSource(candidate.blob, candidate.name as string, type), param);
  }
  if (!('name' in candidate) || !('size' in candidate) || !('stream' in candidate)) {
    const missing = ['name', 'size', 'stream'].filter((key) => !(key in candidate));
    const has = Object.keys(candidate);
    const detail = has.length ? ` (it has ${has.slice(0, 5).join(', ')})` : '';
    throw new InvalidArgumentError(param, `${EXPECTED}; got an object without ${missing.join(', ')}${detail}`);
  }
  return checkedSource(candidate as FileSource, param);
}

function checkedSource(source: FileSource, param: string): FileSource {
  if (typeof source.name !== 'string' || source.name === '') {
    throw new InvalidArgumentError(`${param}.name`, `expected a file name; got ${describe(source.name)}`);
  }
  if (!(typeof source.size === 'number' && Number.isSafeInteger(source.size) && source.size >= 0)) {
    throw new InvalidArgumentError(
      `${param}.size`,
      `expected a non-negative integer of bytes; got ${String(source.size)}`,
    );
  }
  if (typeof source.stream !== 'function') {
    throw new InvalidArgumentError(
      `${param}.stream`,
      `expected a function (start) => ReadableStream; got ${describe(source.stream)}`,
    );
  }
  if (source.type !== undefined && typeof source.type !== 'string') {
    throw new InvalidArgumentError(`${param}.type`, `expected a MIME type string; got ${describe(source.type)}`);
  }
  return source;
}

function blobSource(blob: Blob, name: string, type: string | undefined): FileSource {
  return {
    name,
    size: blob.size,
    type: type || undefined,
    stream: (start) => blob.slice(start).stream() as ReadableStream<Uint8Array>,
  };
}

/** Drops the first `count` bytes of a stream. */
export function skipBytes(count: number): TransformStream<Uint8Array, Uint8Array> {
  let remaining = count;
  return new TransformStream({
    transform(chunk, controller) {
      if (remaining >= chunk.length) {
        remaining -= chunk.length;
        return;
      }
      controller.enqueue(remaining > 0 ? chunk.subarray(remaining) : chunk);
      remaining = 0;
    },
  });
}

/** Passes bytes through, telling `onBytes` how many went by. */
export function countBytes(onBytes: (count: number) => void): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      onBytes(chunk.length);
    },
  });
}

/**
 * The stream's bytes in pieces of `size` (the last may be shorter). Each piece is a view of one
 * reused buffer, so memory holds one piece: finish with it before asking for the next.
 */
export async function* chunksOf(stream: ReadableStream<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  if (!(size > 0)) throw new RangeError(`chunk size ${size} is not positive`);
  const buffer = new Uint8Array(size);
  let filled = 0;
  const reader = stream.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const bytes = read.value;
      for (let at = 0; at < bytes.length; ) {
        const n = Math.min(size - filled, bytes.length - at);
        buffer.set(bytes.subarray(at, at + n), filled);
        filled += n;
        at += n;
        if (filled === size) {
          yield buffer;
          filled = 0;
        }
      }
    }
    if (filled > 0) yield buffer.subarray(0, filled);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
