import type * as NodeFs from 'node:fs';
import type * as NodePath from 'node:path';
import type * as NodeUrl from 'node:url';
import { urlKind } from './arguments.ts';
import { InvalidArgumentError } from './errors.ts';
import type { FileSource } from './file-source.ts';

// A path or a file: URL given to `transfers.send` is a file on disk. This file
// is part of the main entry, which also runs in browsers, so it imports nothing
// from Node: the built-in modules are fetched with process.getBuiltinModule
// (Node 22.3+, Deno, Bun) only when a path is actually given, and no bundler
// ever sees `node:fs`.

export type NodeModules = { fs: typeof NodeFs; path: typeof NodePath; url: typeof NodeUrl };

/** Node's fs, path and url, or an InvalidArgumentError naming `param` and saying what to pass instead. */
export function nodeModules(
  param: string,
  elsewhere = 'file paths and file: URLs can be read only in Node (22.3 or later), Deno or Bun; here pass a File or { blob, name }',
): NodeModules {
  const processObject = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const load = processObject?.getBuiltinModule;
  if (typeof load !== 'function') throw new InvalidArgumentError(param, elsewhere);
  return {
    fs: load.call(processObject, 'node:fs') as typeof NodeFs,
    path: load.call(processObject, 'node:path') as typeof NodePath,
    url: load.call(processObject, 'node:url') as typeof NodeUrl,
  };
}

/** The path a file: URL points at. */
export function pathOfUrl(url: URL, param: string, modules: NodeModules): string {
  if (url.protocol !== 'file:') {
    throw new InvalidArgumentError(
      param,
      `expected a file: URL (a file on this machine); got ${urlKind(url)} (download it first, or pass its bytes as a Blob)`,
    );
  }
  try {
    return modules.url.fileURLToPath(url);
  } catch (cause) {
    throw new InvalidArgumentError(param, `${url.href} is not a file on this machine`, cause);
  }
}

/**
 * A file on disk as a FileSource: the name is its base name (or `options.name`), the size comes from
 * stat, and its bytes are streamed from disk from any offset, never read whole into memory. Checked
 * here, before any request: it exists, is a regular file, and can be opened for reading.
 */
export async function localFileSource(
  input: string | URL,
  param: string,
  options: { name?: string | undefined; type?: string | undefined } = {},
): Promise<FileSource> {
  const modules = nodeModules(param);
  if (typeof input === 'string' && input === '')
    throw new InvalidArgumentError(param, 'expected a path; got an empty path');
  const path = typeof input === 'string' ? input : pathOfUrl(input, param, modules);
  let info: NodeFs.Stats;
  try {
    info = await modules.fs.promises.stat(path);
    if (info.isFile()) await (await modules.fs.promises.open(path, 'r')).close();
  } catch (cause) {
    throw new InvalidArgumentError(param, fileProblem(path, cause), cause);
  }
  if (info.isDirectory()) throw new InvalidArgumentError(param, `${path} is a directory, not a file`);
  if (!info.isFile()) throw new InvalidArgumentError(param, `${path} is not a regular file`);
  const name = options.name ?? modules.path.basename(path);
  const { fs } = modules;
  return {
    name,
    size: info.size,
    type: options.type,
    stream: (start) => fileStream(fs, path, start),
  };
}

/** The file's bytes from `start`, read a piece at a time as the consumer pulls. */
function fileStream(fs: typeof NodeFs, path: string, start: number): ReadableStream<Uint8Array> {
  const PIECE = 1024 * 1024;
  let handle: NodeFs.promises.FileHandle | undefined;
  let position = start;
  const close = async () => {
    const open = handle;
    handle = undefined;
    await open?.close().catch(() => undefined);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          handle ??= await fs.promises.open(path, 'r');
          const buffer = new Uint8Array(PIECE);
          const { bytesRead } = await handle.read(buffer, 0, PIECE, position);
          if (bytesRead === 0) {
            await close();
            controller.close();
            return;
          }
          position += bytesRead;
          controller.enqueue(buffer.subarray(0, bytesRead));
        } catch (error) {
          await close();
          throw error;
        }
      },
      cancel: close,
    },
    { highWaterMark: 0 },
  );
}

function fileProblem(path: string, cause: unknown): string {
  const code = (cause as { code?: unknown }).code;
  const hint = path.startsWith('file:') ? ' (a file: URL must be passed as a URL object, not a string)' : '';
  if (code === 'ENOENT' || code === 'ENOTDIR') return `no such file: ${path}${hint}`;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied: ${path}`;
  if (code === 'EISDIR') return `${path} is a directory, not a file`;
  return `cannot read ${path}: ${cause instanceof Error ? cause.message : String(cause)}`;
}
