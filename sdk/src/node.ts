import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expectObject } from './arguments.ts';
import type { DownloadSink } from './download.ts';
import { FileExistsError, InvalidArgumentError } from './errors.ts';
import { localFileSource } from './local-files.ts';
import type { FileSource } from './sources.ts';

// Node-only helpers, kept out of the main entry so a browser bundle never
// pulls in node:fs. Files are streamed both ways: memory stays flat whatever
// their size. What is written never replaces an existing file unless the
// caller says so, and names from the sender never leave the directory.

/**
 * A file on disk as a FileSource for `transfers.send`; `name` defaults to the file's base name.
 * (`transfers.send` also takes the path itself; this is for choosing another name or type.)
 */
export async function fileFromPath(
  path: string | URL,
  options: { name?: string; type?: string } = {},
): Promise<FileSource> {
  return localFileSource(path, 'path', options);
}

export type WriteOptions = {
  /**
   * Replace a file that already exists. Default false: the download is refused with FileExistsError
   * before it is counted, and the existing file is left as it is. With true, each file is written
   * next to its target and renamed over it once complete, so a failed download leaves the old one.
   */
  overwrite?: boolean | undefined;
};

/** A file as a sink needs it: who it is, and the name its sender gave it. */
export type NamedFile = { id: string; name: string };

/**
 * A DownloadSink for any named files (a share's, an intake document's) that also says where it put
 * each file: `paths.get(file.id)`.
 */
export type DirectorySink = ((file: NamedFile) => Promise<WritableStream<Uint8Array>>) & {
  check: (files: NamedFile[]) => Promise<void>;
  readonly paths: ReadonlyMap<string, string>;
};

/**
 * A DownloadSink writing each file into `directory` (created if missing) under its own name, made
 * safe: only the base name is kept (`../x` is `x`), control and bidirectional-override characters
 * become `_`, a name that is empty or starts with a dot (`.`, `..`, `.profile`) gets a leading `_`,
 * and two files of the same name are `name` and `name (2)`. Nothing lands outside `directory`.
 */
export function toDirectory(directory: string, options: WriteOptions = {}): DirectorySink {
  if (typeof directory !== 'string' || directory === '') {
    throw new InvalidArgumentError('directory', 'expected the path of a directory to write into');
  }
  expectObject(options, 'options');
  const overwrite = options.overwrite === true;
  const paths = new Map<string, string>();
  const used = new Set<string>();
  const pathOf = (file: NamedFile) => {
    let path = paths.get(file.id);
    if (path === undefined) {
      const name = uniqueName(safeFileName(file.name), used);
      used.add(name);
      path = join(directory, name);
      paths.set(file.id, path);
    }
    return path;
  };
  const sink = async (file: NamedFile) => {
    await mkdir(directory, { recursive: true });
    return fileWriter(pathOf(file), overwrite);
  };
  return Object.assign(sink, {
    paths,
    check: async (files: NamedFile[]) => {
      // A share view that does not name its files yet (before a password) is checked when each is opened.
      for (const file of files) if (typeof file.name === 'string') await refuseExisting(pathOf(file), overwrite);
    },
  });
}

/** A DownloadSink writing to one path (for a one-file transfer, or with `fileIds`). */
export function toFile(path: string, options: WriteOptions = {}): DownloadSink {
  if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('path', 'expected a file path');
  expectObject(options, 'options');
  const overwrite = options.overwrite === true;
  return Object.assign(() => fileWriter(path, overwrite), {
    check: () => refuseExisting(path, overwrite),
  });
}

// Characters that must not reach a file name: C0 and C1 controls, DEL, and the
// invisible direction marks and overrides that make a name read as another.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const MAX_NAME_BYTES = 255;

/** A file name from a sender made safe to create in a directory (see `toDirectory`). */
export function safeFileName(name: string): string {
  let safe = String(name).replaceAll('\\', '/').split('/').at(-1) ?? '';
  safe = safe.replace(UNSAFE_CHARACTERS, '_');
  if (safe === '' || safe.startsWith('.')) safe = `_${safe}`;
  return withSuffix(safe, '');
}

function uniqueName(name: string, used: Set<string>): string {
  let candidate = name;
  for (let n = 2; used.has(candidate); n++) candidate = withSuffix(name, ` (${n})`);
  return candidate;
}

/** `stem + suffix + extension`, the stem shortened so the whole fits in a file name's 255 bytes. */
function withSuffix(name: string, suffix: string): string {
  const dot = name.lastIndexOf('.');
  const extension = dot > 1 && name.length - dot <= 16 ? name.slice(dot) : '';
  const stem = Array.from(name.slice(0, name.length - extension.length));
  const room = MAX_NAME_BYTES - Buffer.byteLength(suffix + extension);
  while (stem.length > 1 && Buffer.byteLength(stem.join('')) > room) stem.pop();
  return `${stem.join('')}${suffix}${extension}`;
}

async function refuseExisting(path: string, overwrite: boolean): Promise<void> {
  const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  // Even with overwrite, a directory (or a device, a socket…) is never replaced by a download.
  if (info && (!overwrite || !(info.isFile() || info.isSymbolicLink()))) throw new FileExistsError(path);
}

/**
 * A stream writing one file. Without overwrite the file is created exclusively (an existing file or
 * symbolic link is never opened); with it, a temporary file beside it is renamed over it when
 * complete. A download that fails removes what it wrote.
 */
async function fileWriter(path: string, overwrite: boolean): Promise<WritableStream<Uint8Array>> {
  const target = overwrite ? join(dirname(path), `.valise-${randomBytes(6).toString('hex')}.part`) : path;
  const handle = await open(target, 'wx').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EEXIST' ? new FileExistsError(path) : error;
  });
  let closed = false;
  const discard = async () => {
    if (!closed) await handle.close().catch(() => undefined);
    closed = true;
    await rm(target, { force: true });
  };
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      try {
        for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
      } catch (error) {
        await discard();
        throw error;
      }
    },
    async close() {
      try {
        await handle.close();
        closed = true;
        if (overwrite) await rename(target, path);
      } catch (error) {
        await discard();
        throw error;
      }
    },
    abort: discard,
  });
}
