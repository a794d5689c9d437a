import type * as NodeFs from 'node:fs';
import { expectObject } from './arguments.ts';
import { utf8 } from './encoding.ts';
import { FileExistsError, InvalidArgumentError } from './errors.ts';
import { type NodeModules, nodeModules, pathOfUrl } from './local-files.ts';

// Download sinks writing to disk: `toDirectory` and `toFile`, which
// `@valise/sdk/node` exports, and what `transfers.download` makes of a path
// given as `to`. Like local-files.ts this is part of the main entry, which also
// runs in browsers: Node's modules are fetched only when a sink is made. Files
// are streamed: memory stays flat whatever their size. What is written never
// replaces an existing file unless the caller says so, and names from the
// sender never leave the directory.

const ELSEWHERE =
  'files can be written to disk only in Node (22.3 or later), Deno or Bun; here pass a function (file) => WritableStream';

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
  const modules = nodeModules('directory', ELSEWHERE);
  const overwrite = options.overwrite === true;
  const paths = new Map<string, string>();
  const used = new Set<string>();
  const pathOf = (file: NamedFile) => {
    let path = paths.get(file.id);
    if (path === undefined) {
      const name = uniqueName(safeFileName(file.name), used);
      used.add(name);
      path = modules.path.join(directory, name);
      paths.set(file.id, path);
    }
    return path;
  };
  const sink = async (file: NamedFile) => {
    await modules.fs.promises.mkdir(directory, { recursive: true });
    return fileWriter(modules, pathOf(file), overwrite);
  };
  return Object.assign(sink, {
    paths,
    check: async (files: NamedFile[]) => {
      // A share view that does not name its files yet (before a password) is checked when each is opened.
      for (const file of files) {
        if (typeof file.name === 'string') await refuseExisting(modules.fs, pathOf(file), overwrite);
      }
    },
  });
}

/** A DownloadSink writing one file (`toFile`), whatever the file. */
export type FileSink = (() => Promise<WritableStream<Uint8Array>>) & { check: () => Promise<void> };

/** A DownloadSink writing to one path (for a one-file transfer, or with `fileIds`). */
export function toFile(path: string, options: WriteOptions = {}): FileSink {
  if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('path', 'expected a file path');
  expectObject(options, 'options');
  const modules = nodeModules('path', ELSEWHERE);
  const overwrite = options.overwrite === true;
  return Object.assign(() => fileWriter(modules, path, overwrite), {
    check: () => refuseExisting(modules.fs, path, overwrite),
  });
}

/**
 * `transfers.download`'s `to` given as a path or a file: URL: the directory to write into, as
 * `toDirectory(path)` (existing files are refused; pass `toDirectory(path, { overwrite: true })`
 * to replace them).
 */
export function directoryOf(to: string | URL, param: string): DirectorySink {
  if (to === '') throw new InvalidArgumentError(param, 'expected the path of a directory; got an empty path');
  const modules = nodeModules(param, ELSEWHERE);
  return toDirectory(typeof to === 'string' ? to : pathOfUrl(to, param, modules));
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

const byteLength = (text: string) => utf8.encode(text).length;

/** `stem + suffix + extension`, the stem shortened so the whole fits in a file name's 255 bytes. */
function withSuffix(name: string, suffix: string): string {
  const dot = name.lastIndexOf('.');
  const extension = dot > 1 && name.length - dot <= 16 ? name.slice(dot) : '';
  const stem = Array.from(name.slice(0, name.length - extension.length));
  const room = MAX_NAME_BYTES - byteLength(suffix + extension);
  while (stem.length > 1 && byteLength(stem.join('')) > room) stem.pop();
  return `${stem.join('')}${suffix}${extension}`;
}

async function refuseExisting(fs: typeof NodeFs, path: string, overwrite: boolean): Promise<void> {
  const info = await fs.promises.lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  // Even with overwrite, a directory (or a device, a socket…) is never replaced by a download.
  if (info && (!overwrite || !(info.isFile() || info.isSymbolicLink()))) throw new FileExistsError(path);
}

function randomHex(bytes: number): string {
  const random = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(random, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * A stream writing one file. Without overwrite the file is created exclusively (an existing file or
 * symbolic link is never opened); with it, a temporary file beside it is renamed over it when
 * complete. A download that fails removes what it wrote.
 */
async function fileWriter(
  { fs, path: paths }: NodeModules,
  path: string,
  overwrite: boolean,
): Promise<WritableStream<Uint8Array>> {
  const target = overwrite ? paths.join(paths.dirname(path), `.valise-${randomHex(6)}.part`) : path;
  const handle = await fs.promises.open(target, 'wx').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EEXIST' ? new FileExistsError(path) : error;
  });
  let closed = false;
  const discard = async () => {
    if (!closed) await handle.close().catch(() => undefined);
    closed = true;
    await fs.promises.rm(target, { force: true });
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
        if (overwrite) await fs.promises.rename(target, path);
      } catch (error) {
        await discard();
        throw error;
      }
    },
    abort: discard,
  });
}
