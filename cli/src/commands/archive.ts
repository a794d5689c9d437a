import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { safeFileName, toFile } from '../../../sdk/src/node.ts';
import { expectPositionals, parseCommand } from '../args.ts';
import type { Context } from '../context.ts';
import { note, printJson, printLine } from '../output.ts';
import { Progress } from '../progress.ts';

const USAGE = 'valise archive TRANSFER_ID [-o FILE.zip|DIR] [--force]';

/**
 * The owner's copy of a transfer as one ZIP (GET /v1/transfers/{id}/archive): `-o` names the file,
 * or a directory for `<title>.zip` (default: here). Counts no download. Server mode only: an
 * end-to-end transfer is refused by the API (its recipients' `valise get --zip` builds one).
 */
export async function archive(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
    USAGE,
  );
  const [id = ''] = expectPositionals(positionals, ['TRANSFER_ID'], USAGE);
  const response = await ctx.client().transfers.archive(id);
  await saveArchive(ctx, response, { id, output: values.output, force: values.force });
}

/**
 * Writes an archive response to `output` (a file, or a directory for the name the server gave;
 * default here), with progress, and prints where it went.
 */
export async function saveArchive(
  ctx: Context,
  response: Response,
  target: { id: string; output?: string | undefined; force?: boolean | undefined },
): Promise<void> {
  const { id } = target;
  const size = Number(response.headers.get('content-length') ?? 0);
  const filename = filenameOf(response.headers.get('content-disposition')) ?? `${id}.zip`;
  const output = resolve(target.output ?? '.');
  const isDirectory = await stat(output).then(
    (found) => found.isDirectory(),
    () => false,
  );
  const path = isDirectory ? join(output, safeFileName(filename)) : output;
  const sink = toFile(path, { overwrite: target.force ?? false });
  await sink.check?.([]);
  const progress = new Progress([{ name: filename, size }]);
  let bytes = 0;
  const counted = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      bytes += chunk.length;
      progress.update(0, bytes, bytes);
      controller.enqueue(chunk);
    },
  });
  if (!response.body) throw new Error('the archive had no body');
  const file = { id, name: filename, size, mime_type: 'application/zip', sha256: null };
  await response.body.pipeThrough(counted).pipeTo(await sink(file));
  progress.fileDone(0);
  if (ctx.json) return printJson({ object: 'archive_download', path, built_by: 'server', size: bytes });
  note(progress.summary('Received'));
  printLine(path);
}

/** The UTF-8 name of a `Content-Disposition: attachment; filename*=UTF-8''…` header. */
function filenameOf(header: string | null): string | null {
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(header ?? '')?.[1];
  if (!encoded) return null;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}
