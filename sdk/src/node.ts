import { localFileSource } from './local-files.ts';
import type { FileSource } from './sources.ts';

// Helpers for files on disk, apart from the main entry's API. They load Node's
// modules only when called (local-files.ts, local-directory.ts), so a browser
// bundle never pulls in node:fs.

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

export {
  type DirectorySink,
  type FileSink,
  type NamedFile,
  safeFileName,
  toDirectory,
  toFile,
  type WriteOptions,
} from './local-directory.ts';
