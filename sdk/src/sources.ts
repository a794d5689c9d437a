// What `transfers.send` uploads: anything that can stream its bytes from an
// offset, so an interrupted upload resumes without re-reading what was stored.

export interface FileSource {
  name: string;
  /** Bytes. It must not change during an upload, or its resumption. */
  size: number;
  /** MIME type; default `application/octet-stream`. */
  type?: string | undefined;
  /** The file's bytes from `start` to the end. */
  stream(start: number): ReadableStream<Uint8Array>;
}

/** A browser `File`, a `Blob` with a name, or any FileSource (`fileFromPath` in `@valise/sdk/node`). */
export type SendFileInput = File | { blob: Blob; name: string; type?: string } | FileSource;

export function toFileSource(input: SendFileInput): FileSource {
  if (typeof File !== 'undefined' && input instanceof File) return blobSource(input, input.name, input.type);
  if ('blob' in input) return blobSource(input.blob, input.name, input.type ?? input.blob.type);
  return input;
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
