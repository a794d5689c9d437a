import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type BlockedReason,
  DEFAULT_SEGMENT_SIZE,
  decryptedSize,
  type SharedTransfer,
  Valise,
} from '../../../sdk/src/index.ts';
import { safeFileName, toDirectory, toFile } from '../../../sdk/src/node.ts';
import { expectPositionals, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, UsageError } from '../exit-codes.ts';
import { note, printJson, printLine } from '../output.ts';
import { Progress } from '../progress.ts';
import { passwordFrom } from '../prompt.ts';

const USAGE =
  'valise get SHARE_URL [-o DIR] [--zip [-o FILE.zip|DIR]] [--force] [--password PASSWORD|-] [--wait] [--wait-timeout SECONDS]';

/** States a transfer leaves by itself: --wait waits them out. */
const TRANSIENT: ReadonlySet<string> = new Set<BlockedReason>(['uploading', 'scanning']);

/**
 * Downloads every file of a share link into DIR (default: here), decrypting e2e links locally. Names
 * come from the sender: each file lands inside DIR under a safe name, and an existing file is never
 * replaced without --force (the download is refused before it is counted).
 */
export async function get(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      output: { type: 'string', short: 'o' },
      force: { type: 'boolean' },
      password: { type: 'string' },
      wait: { type: 'boolean' },
      'wait-timeout': { type: 'string' },
      zip: { type: 'boolean' },
    },
    USAGE,
  );
  const [shareUrl = ''] = expectPositionals(positionals, ['SHARE_URL'], USAGE);
  const link = parseShareUrl(shareUrl);
  const directory = resolve(values.output ?? '.');
  // No API key is needed: the link is the capability. It also names its own server.
  const valise = new Valise({ baseUrl: link.origin });

  let shared = await valise.shares.get(link.code);
  if (values.wait) {
    const deadline = Date.now() + (positiveInteger(values['wait-timeout'], '--wait-timeout') ?? 600) * 1000;
    while (!shared.available && TRANSIENT.has(shared.blocked_reason ?? '') && Date.now() < deadline) {
      if (!ctx.json) note(`Waiting: the transfer is ${shared.blocked_reason}…`);
      await sleep(1000);
      shared = await valise.shares.get(link.code);
    }
  }
  const password = await passwordFrom(values.password);
  if (values.zip)
    return getZip(valise, shareUrl, { output: values.output, force: values.force ?? false, password }, ctx);
  // Behind a password the share names no file until it is unlocked.
  if (shared.files === null) shared = await valise.shares.unlock(link.code, password === undefined ? {} : { password });
  const shownFiles = shared.files ?? [];
  const progress = new Progress(
    shownFiles.map((file) => ({ name: file.name, size: plaintextSize(shared, file.size) })),
  );
  const indexOf = new Map(shownFiles.map((file, index) => [file.id, index]));
  let moved = 0;
  const lastBytes = new Map<string, number>();
  const sink = toDirectory(directory, { overwrite: values.force ?? false });
  const result = await valise.transfers.download(shareUrl, {
    password,
    to: sink,
    onProgress: ({ fileId, bytes }) => {
      moved += bytes - (lastBytes.get(fileId) ?? 0);
      lastBytes.set(fileId, bytes);
      progress.update(indexOf.get(fileId) ?? 0, bytes, moved);
    },
  });
  const files = result.files.map((file) => ({ ...file, path: sink.paths.get(file.id) ?? directory }));
  files.forEach((file) => {
    progress.fileDone(indexOf.get(file.id) ?? 0);
  });
  if (ctx.json) return printJson({ object: 'download', transfer: result.transfer, directory, files });
  note(progress.summary('Received'));
  for (const file of files) printLine(file.path);
}

/**
 * `--zip`: every file as one archive, `-o` naming the file (or a directory for `<title>.zip`,
 * default here). The API streams it for a server-mode share; an end-to-end one is decrypted and
 * archived here. An existing file is never replaced without --force.
 */
async function getZip(
  valise: Valise,
  shareUrl: string,
  options: { output: string | undefined; force: boolean; password: string | undefined },
  ctx: Context,
): Promise<void> {
  const output = resolve(options.output ?? '.');
  let path = output;
  let progress: Progress | undefined;
  const result = await valise.transfers.downloadZip(shareUrl, {
    password: options.password,
    to: async (filename) => {
      const isDirectory = await stat(output).then(
        (found) => found.isDirectory(),
        () => false,
      );
      path = isDirectory ? join(output, safeFileName(filename)) : output;
      return toFile(path, { overwrite: options.force })({
        id: 'archive',
        name: filename,
        size: 0,
        mime_type: '',
        sha256: null,
      });
    },
    onProgress: ({ bytes, size }) => {
      progress ??= new Progress([{ name: 'archive', size }]);
      progress.update(0, bytes, bytes);
    },
  });
  progress ??= new Progress([{ name: 'archive', size: result.size }]);
  progress.fileDone(0);
  if (ctx.json) return printJson({ object: 'archive_download', path, built_by: result.builtBy, size: result.size });
  note(progress.summary('Received'));
  printLine(path);
}

function parseShareUrl(text: string): { origin: string; code: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`Not a share link: ${text}`, `Usage: ${USAGE}`);
  }
  const code = url.pathname.split('/').filter(Boolean).at(-1);
  if (!code || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new CliError(`Not a share link: ${text}`);
  return { origin: url.origin, code: decodeURIComponent(code) };
}

function plaintextSize(shared: SharedTransfer, storedSize: number): number {
  if (shared.encryption_mode !== 'e2e') return storedSize;
  return decryptedSize(storedSize, DEFAULT_SEGMENT_SIZE) ?? storedSize;
}
