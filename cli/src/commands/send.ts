import { resolve } from 'node:path';
import {
  type FileSource,
  InvalidArgumentError,
  SendInterruptedError,
  type SendSession,
  type Valise,
} from '../../../sdk/src/index.ts';
import { fileFromPath } from '../../../sdk/src/node.ts';
import { byteRate, durationHours, parseCommand, positiveInteger } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, UsageError } from '../exit-codes.ts';
import { note, printJson, printLine } from '../output.ts';
import { listPending, loadPending, type PendingSend, removePending, savePending } from '../pending-sends.ts';
import { Progress } from '../progress.ts';
import { passwordFrom } from '../prompt.ts';
import { visible } from '../terminal.ts';
import { throttled } from '../throttle.ts';

const SEND_USAGE =
  'valise send FILE… [--to EMAIL…] [--expires 24h] [--max-downloads N] [--password PASSWORD|-] [--e2e] [--title TEXT] [--approval] [--country CC…] [--limit-rate 10M]';

export async function send(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      to: { type: 'string', multiple: true },
      expires: { type: 'string' },
      'max-downloads': { type: 'string' },
      password: { type: 'string' },
      e2e: { type: 'boolean' },
      title: { type: 'string' },
      approval: { type: 'boolean' },
      country: { type: 'string', multiple: true },
      'limit-rate': { type: 'string' },
    },
    SEND_USAGE,
  );
  if (positionals.length === 0) throw new UsageError('Name at least one file to send.', `Usage: ${SEND_USAGE}`);
  const password = await passwordFrom(values.password);
  const fields = {
    // Each address gets its own link (docs/recipients.md).
    ...(values.to ? { recipients: values.to } : {}),
    ...(values.title ? { transfer_title: values.title } : {}),
    ...(password ? { password } : {}),
    ...(values.approval ? { approval_required: true } : {}),
    // Downloads only from these countries (docs/transfers.md, "Countries"); the API checks the codes.
    ...(values.country ? { allowed_countries: values.country } : {}),
    expires_in_hours: durationHours(values.expires, '--expires'),
    max_downloads: positiveInteger(values['max-downloads'], '--max-downloads'),
  };
  const rate = byteRate(values['limit-rate'], '--limit-rate');
  const paths = positionals.map((path) => resolve(path));
  const sources = await Promise.all(paths.map(openFile));
  const mode = values.e2e ? 'e2e' : 'server';

  const valise = ctx.client();
  const session = await valise.transfers.prepare({ ...fields, files: sources, mode });
  // Saved before any byte leaves, so even a killed process can be resumed.
  await savePending({ version: 1, created_at: new Date().toISOString(), paths, session });
  await upload(valise, ctx, { session, paths, sources, rate, verb: 'Sent' });
}

const RESUME_USAGE = 'valise resume [TRANSFER_ID] [--list] [--limit-rate 10M]';

/** Continues the last interrupted send (or the one named): only the bytes the server lacks are sent. */
export async function resume(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { list: { type: 'boolean' }, 'limit-rate': { type: 'string' } },
    RESUME_USAGE,
  );
  if (positionals.length > 1) throw new UsageError(`Unexpected argument: ${positionals[1]}`, `Usage: ${RESUME_USAGE}`);
  if (values.list) return listInterrupted(ctx);
  const pending = await loadPending(positionals[0]);
  const sources = await Promise.all(pending.paths.map(openFile));
  const rate = byteRate(values['limit-rate'], '--limit-rate');
  if (!ctx.json) note(`Resuming transfer ${pending.session.transfer.id} (${pending.paths.length} file(s)).`);
  await upload(ctx.client(), ctx, { session: pending.session, paths: pending.paths, sources, rate, verb: 'Resumed' });
}

async function listInterrupted(ctx: Context): Promise<void> {
  const all = await listPending();
  const rows = all.map((pending: PendingSend) => ({
    transfer_id: pending.session.transfer.id,
    created_at: pending.created_at,
    mode: pending.session.mode,
    paths: pending.paths,
  }));
  if (ctx.json) return printJson({ object: 'list', data: rows, has_more: false, next_cursor: null });
  if (rows.length === 0) return note('No interrupted sends.');
  for (const row of rows)
    printLine(`${row.transfer_id}  ${row.created_at}  ${row.mode}  ${visible(row.paths.join(' '))}`);
}

type UploadJob = {
  session: SendSession;
  paths: string[];
  sources: FileSource[];
  rate: number | undefined;
  verb: string;
};

async function upload(valise: Valise, ctx: Context, job: UploadJob): Promise<void> {
  const { session } = job;
  const progress = new Progress(session.files.map((file) => ({ name: file.name, size: file.storedSize })));
  const files = job.rate ? job.sources.map((source) => throttled(source, job.rate as number)) : job.sources;
  try {
    await valise.transfers.resume(session, {
      files,
      onProgress: (p) => progress.update(p.fileIndex, p.fileBytesUploaded, p.bytesSentThisCall),
    });
  } catch (error) {
    if (error instanceof SendInterruptedError) {
      throw new CliError(`Upload interrupted: ${error.message.replace(/^Upload interrupted \((.*)\);.*$/s, '$1')}`, {
        exitCode: error.status > 0 ? 2 : 3,
        hint: `Run \`valise resume ${session.transfer.id}\` to send the rest.`,
      });
    }
    throw error;
  }
  session.files.forEach((_, index) => {
    progress.fileDone(index);
  });
  await removePending(session.transfer.id);
  if (ctx.json) {
    return printJson({
      object: 'sent_transfer',
      transfer: session.transfer,
      share_url: session.shareUrl,
      files: session.files.map((file) => ({ file_id: file.fileId, name: file.name, size: file.plaintextSize })),
    });
  }
  note(progress.summary(job.verb));
  if (session.mode === 'e2e')
    note('End-to-end encrypted: the key is in the link (#k=…); anyone with the whole link can read the files.');
  printLine(session.shareUrl);
}

/** A file to send, checked (exists, regular, readable) before anything is sent. */
async function openFile(path: string): Promise<FileSource> {
  try {
    return await fileFromPath(path);
  } catch (error) {
    // The SDK's message names the argument (`path: no such file: …`); here the path says it all.
    if (error instanceof InvalidArgumentError) throw new CliError(`${error.message.replace(/^path: /, '')}.`);
    throw error;
  }
}
