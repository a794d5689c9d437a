import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { DownloadSink } from './download.ts';
import type { FileSource } from './sources.ts';

// Node-only helpers, kept out of the main entry so a browser bundle never
// pulls in node:fs. Files are streamed both ways: memory stays flat whatever
// their size.

/** A file on disk as a FileSource for `transfers.send`; `name` defaults to the file's base name. */
export async function fileFromPath(path: string, options: { name?: string; type?: string } = {}): Promise<FileSource> {
  const info = await stat(path);
  if (!info.isFile()) throw new TypeError(`${path} is not a regular file`);
  return {
    name: options.name ?? basename(path),
    size: info.size,
    type: options.type,
    stream: (start) =>
      Readable.toWeb(createReadStream(path, { start, highWaterMark: 1024 * 1024 })) as ReadableStream<Uint8Array>,
  };
}

/**
 * A DownloadSink writing each file into `directory` under its own name. Names come from the sender:
 * only the base name is used, so `../x` cannot escape the directory.
 */
export function toDirectory(directory: string): DownloadSink {
  return async (file) => {
    await mkdir(directory, { recursive: true });
    const name = basename(file.name.replaceAll('\\', '/'));
    if (!name || name === '.' || name === '..') throw new TypeError(`unsafe file name: ${JSON.stringify(file.name)}`);
    return Writable.toWeb(createWriteStream(join(directory, name))) as WritableStream<Uint8Array>;
  };
}

/** A DownloadSink writing to one path (for a one-file transfer, or with `fileIds`). */
export function toFile(path: string): DownloadSink {
  return () => Writable.toWeb(createWriteStream(path)) as WritableStream<Uint8Array>;
}
