import { expectHttpUrl, expectObject, expectSignal, expectString } from './arguments.ts';
import { DEFAULT_SEGMENT_SIZE, decryptedSize } from './crypto/val1.ts';
import { downloadShare } from './download.ts';
import type { Shares } from './resources/shares.ts';
import { countBytes } from './sources.ts';
import { planZip, ZipWriter } from './zip.ts';

// A share link's files as one ZIP (docs/transfers.md, "Download all as ZIP"):
// a server-mode share streams the archive the API builds; an end-to-end one is
// decrypted here, file after file, into the same format written here.

export type ZipDownloadParams = {
  password?: string | undefined;
  /**
   * Where the archive's bytes go, or a function of its file name (`<title>.zip`) that opens it,
   * called once before the first byte (`(name) => toFile(join(dir, name))(…)` from `@valise/sdk/node`).
   */
  to:
    | WritableStream<Uint8Array>
    | ((filename: string) => WritableStream<Uint8Array> | Promise<WritableStream<Uint8Array>>);
  /** Bytes of the archive written so far, and its exact length. */
  onProgress?: ((progress: { bytes: number; size: number }) => void) | undefined;
  signal?: AbortSignal | undefined;
};

export type ZipDownload = {
  /** Who made it: the API (server mode) or this client (end to end). */
  builtBy: 'server' | 'client';
  filename: string;
  size: number;
};

export async function downloadShareZip(
  shares: Shares,
  shareUrl: string,
  params: ZipDownloadParams,
): Promise<ZipDownload> {
  const url = expectHttpUrl(shareUrl, 'shareUrl', 'a share link');
  expectObject(params, 'params');
  expectString(params.password, 'password', true);
  expectSignal(params.signal, 'signal');
  const code = decodeURIComponent(url.pathname.split('/').filter(Boolean).at(-1) ?? '');
  const options = { signal: params.signal };
  const password = params.password === undefined ? {} : { password: params.password };
  let shared = await shares.get(code, options);
  if (shared.files === null) shared = await shares.unlock(code, password, options);
  const files = shared.files ?? [];
  const title = shared.transfer_title ?? 'download';
  const open = (filename: string) => (typeof params.to === 'function' ? params.to(filename) : params.to);
  let written = 0;
  const progress = (size: number) => (n: number) => {
    written += n;
    params.onProgress?.({ bytes: written, size });
  };

  if (shared.encryption_mode !== 'e2e') {
    const link = await shares.archiveLink(code, password, options);
    const response = await shares.openArchive(link.archive_url, options);
    if (!response.body) throw new Error('the archive had no body');
    await response.body.pipeThrough(countBytes(progress(link.size))).pipeTo(await open(link.filename), options);
    return { builtBy: 'server', filename: link.filename, size: link.size };
  }

  const plan = planZip(
    files.map((file) => ({ name: file.name, size: decryptedSize(file.size, DEFAULT_SEGMENT_SIZE) ?? file.size })),
  );
  const zip = new ZipWriter(plan);
  const filename = `${title.replace(/[/\\]/g, '_')}.zip`;
  const out = (await open(filename)).getWriter();
  const count = progress(plan.size);
  const write = async (bytes: Uint8Array) => {
    await out.write(bytes);
    count(bytes.length);
  };
  try {
    await downloadShare(shares, shareUrl, {
      ...password,
      signal: params.signal,
      // Each file's plaintext goes into the archive as one entry, in the share's order.
      to: (file) => {
        const expected = plan.entries[files.findIndex((f) => f.id === file.id)];
        return new WritableStream<Uint8Array>({
          start: async () => {
            const header = zip.start();
            if (zip.current !== expected) throw new Error(`${file.name} came out of order`);
            await write(header);
          },
          write: (chunk) => write(zip.update(chunk)),
          close: async () => write(zip.end()),
        });
      },
    });
    for (const bytes of zip.finish()) await write(bytes);
    await out.close();
  } catch (error) {
    await out.abort(error).catch(() => undefined);
    throw error;
  }
  return { builtBy: 'client', filename, size: plan.size };
}
