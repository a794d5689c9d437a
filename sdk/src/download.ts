import {
  describe,
  expectFunction,
  expectHttpUrl,
  expectInteger,
  expectObject,
  expectSignal,
  expectString,
} from './arguments.ts';
import { fileKey, linkKeyFrom } from './crypto/link-key.ts';
import { createDecryptStream } from './crypto/val1.ts';
import { InvalidArgumentError, ValiseError } from './errors.ts';
import { directoryOf } from './local-directory.ts';
import type { Shares } from './resources/shares.ts';
import { resumableBody } from './resumable-body.ts';
import { countBytes } from './sources.ts';
import type { SharedFile } from './types.ts';

// Downloading a share link: one counted download, then each file streamed from
// its link into a sink the caller provides, decrypted on the way in e2e mode.

export type DownloadSink = ((file: SharedFile) => WritableStream<Uint8Array> | Promise<WritableStream<Uint8Array>>) & {
  /**
   * Optional: called with the files about to be written, before the download is counted. Throw to
   * refuse (`toDirectory` throws FileExistsError when a file is already there).
   */
  check?: ((files: SharedFile[]) => void | Promise<void>) | undefined;
  /** Optional: where the sink put each file, by file id (`toDirectory` keeps it); becomes each file's `path`. */
  readonly paths?: ReadonlyMap<string, string> | undefined;
};

export type DownloadParams = {
  /** When the transfer has one. */
  password?: string | undefined;
  /**
   * Where each file's plaintext goes: a directory's path or `file:` URL (Node, Deno, Bun), written
   * as `toDirectory(path)` from `@valise/sdk/node` writes it (existing files refused), or a sink
   * such as `toDirectory(path, { overwrite: true })`.
   */
  to: DownloadSink | string | URL;
  /** Only these files (ids); default all. */
  fileIds?: string[] | undefined;
  onProgress?: ((progress: { fileId: string; name: string; bytes: number }) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Times a file's download is picked up where a dropped connection left it (`Range`); default 3. */
  maxResumes?: number | undefined;
};

export type DownloadedFile = SharedFile & {
  /** Plaintext bytes written. */
  bytes: number;
  /** Where the file was written, when `to` is a directory (a path, or a `toDirectory` sink). */
  path?: string | undefined;
};

export async function downloadShare(shares: Shares, shareUrl: string, params: DownloadParams) {
  const code = shortCodeOf(expectHttpUrl(shareUrl, 'shareUrl', 'a share link'));
  checkDownloadParams(params);
  const sink = typeof params.to === 'function' ? params.to : directoryOf(params.to, 'to');
  let shared = await shares.get(code, { signal: params.signal });
  // Behind a password the view names no file until it is unlocked.
  if (shared.files === null) {
    shared = await shares.unlock(code, params.password === undefined ? {} : { password: params.password }, {
      signal: params.signal,
    });
  }
  const sharedFiles = shared.files ?? [];
  const linkKey = shared.encryption_mode === 'e2e' ? linkKeyFrom(shareUrl) : null;
  if (shared.encryption_mode === 'e2e' && !linkKey) {
    throw new ValiseError({
      code: 'integrity_error',
      message: 'This transfer is end-to-end encrypted and the link has no `#k=` key: it cannot be decrypted',
    });
  }
  const wanted = params.fileIds ? new Set(params.fileIds) : null;
  // Before the download is counted: the sink may refuse (a file that exists, say).
  await sink.check?.(sharedFiles.filter((file) => !wanted || wanted.has(file.id)));
  const links = await shares.downloadLinks(code, params.password === undefined ? {} : { password: params.password }, {
    signal: params.signal,
  });
  const files: DownloadedFile[] = [];
  for (const link of links.files) {
    if (wanted && !wanted.has(link.file_id)) continue;
    const file = sharedFiles.find((f) => f.id === link.file_id);
    if (!file) throw new ValiseError({ code: 'unexpected_response', message: `no file ${link.file_id} in the share` });
    // The stored bytes (ciphertext in e2e mode) as one stream, even across dropped connections.
    let body = resumableBody(
      (range) => shares.openDownload(link.download_url, { signal: params.signal, ...(range ? { range } : {}) }),
      { maxResumes: params.maxResumes ?? 3, signal: params.signal },
    );
    if (linkKey) {
      const key = await fileKey(linkKey, file.id, sharedFiles.length);
      body = body.pipeThrough(createDecryptStream({ key, blobSize: file.size }));
    }
    let bytes = 0;
    const counted = body.pipeThrough(
      countBytes((n) => {
        bytes += n;
        params.onProgress?.({ fileId: file.id, name: file.name, bytes });
      }),
    );
    await counted.pipeTo(await sink(file), params.signal ? { signal: params.signal } : {});
    const path = sink.paths?.get(file.id);
    files.push(path === undefined ? { ...file, bytes } : { ...file, bytes, path });
  }
  return { transfer: shared, files };
}

function shortCodeOf(url: URL): string {
  const code = url.pathname.split('/').filter(Boolean).at(-1);
  if (!code) throw new InvalidArgumentError('shareUrl', `expected a share link (…/t/<code>); got ${url.href}`);
  return decodeURIComponent(code);
}

function checkDownloadParams(params: unknown): asserts params is DownloadParams {
  expectObject(params, 'params');
  if (typeof params.to !== 'string' && !(params.to instanceof URL)) {
    expectFunction(
      params.to,
      'to',
      "a directory's path, or a function (file) => WritableStream such as toDirectory(dir) from @valise/sdk/node",
    );
  }
  const ids = params.fileIds;
  if (ids !== undefined && !(Array.isArray(ids) && ids.every((id) => typeof id === 'string'))) {
    throw new InvalidArgumentError('fileIds', `expected an array of file ids (strings); got ${describe(ids)}`);
  }
  expectString(params.password, 'password', true);
  expectFunction(params.onProgress, 'onProgress', 'a function', true);
  expectInteger(params.maxResumes, 'maxResumes', 0);
  expectSignal(params.signal, 'signal');
}
