import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  type CreateIntakeParams,
  DEFAULT_INTAKE_KEM,
  generateIntakeKeyPair,
  INTAKE_KEMS,
  type Intake,
  type IntakeDocument,
  type IntakeKem,
  Valise,
} from '../../../sdk/src/index.ts';
import { toDirectory } from '../../../sdk/src/node.ts';
import { durationHours, expectPositionals, parseCommand, positiveInteger, runSubcommand } from '../args.ts';
import type { Context } from '../context.ts';
import { CliError, UsageError } from '../exit-codes.ts';
import { formatBytes, formatTime, note, printFields, printJson, printLine, printTable } from '../output.ts';
import { listArguments, listOutput } from './lists.ts';

const USAGE = `valise intake keygen -o KEY_FILE [--kem MLKEM768-X25519|DHKEM-X25519]
       valise intake create --title TEXT [--key KEY_FILE | --server] [--instructions TEXT] [--retention 720h]
                            [--expires 30d] [--max-files N] [--max-submissions N] [--notify EMAIL]… [--allow-metadata]
       valise intake ls [--limit N] [--all]
       valise intake show INTAKE_ID
       valise intake docs INTAKE_ID [--limit N] [--all]
       valise intake get INTAKE_ID DOC_ID [--key KEY_FILE] [-o DIR] [--force]
       valise intake submit INTAKE_ID FILE… --publishable-key cip_… [--reference TEXT]
       valise intake close INTAKE_ID
       valise intake rm INTAKE_ID`;

/**
 * Secure intakes from the terminal (docs/intakes.md). The key file `keygen` writes holds the
 * private key of end-to-end intakes: it never leaves this machine, and `get` decrypts with it here.
 */
export function intake(argv: string[], ctx: Context): Promise<void> {
  return runSubcommand(
    'intake',
    { keygen, create, ls: list, list, show, docs, get, submit, close, rm: destroy, delete: destroy },
    USAGE,
    argv,
    ctx,
  );
}

/** The key file: JSON, readable by its owner only. */
type KeyFile = { kem: IntakeKem; public_key: string; private_key?: string };

async function keygen(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { output: { type: 'string', short: 'o' }, kem: { type: 'string' } },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  if (!values.output)
    throw new UsageError('-o KEY_FILE is required: where to keep the private key.', `Usage: ${USAGE}`);
  const kem = (values.kem ?? DEFAULT_INTAKE_KEM) as IntakeKem;
  if (!INTAKE_KEMS.includes(kem)) throw new UsageError(`--kem is one of ${INTAKE_KEMS.join(', ')}.`);
  const pair = await generateIntakeKeyPair(kem);
  const file: KeyFile = {
    kem,
    public_key: Buffer.from(pair.publicKey).toString('base64url'),
    private_key: Buffer.from(pair.privateKey).toString('base64url'),
  };
  const path = resolve(values.output);
  try {
    // `wx`: never replace a key file, whose loss would lose every document sealed to it.
    await writeFile(path, `${JSON.stringify(file, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError(`${path} exists: choose another file.`);
    throw error;
  }
  const result = {
    object: 'intake_key',
    kem,
    path,
    public_key: file.public_key,
    fingerprint: fingerprint(file.public_key),
  };
  if (ctx.json) return printJson(result);
  note(`Wrote the key pair to ${path}. Keep it safe: without it, end-to-end documents cannot be opened.`);
  printFields([
    ['kem', kem],
    ['fingerprint', result.fingerprint],
  ]);
}

async function create(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      title: { type: 'string' },
      key: { type: 'string' },
      server: { type: 'boolean' },
      instructions: { type: 'string' },
      retention: { type: 'string' },
      expires: { type: 'string' },
      'max-files': { type: 'string' },
      'max-submissions': { type: 'string' },
      notify: { type: 'string', multiple: true },
      'allow-metadata': { type: 'boolean' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  if (!values.title) throw new UsageError('--title is required.', `Usage: ${USAGE}`);
  if (!values.key === !values.server) {
    throw new UsageError('Give --key KEY_FILE (end to end) or --server (encrypted and scanned by Valise).');
  }
  const key = values.key ? await readKeyFile(values.key) : null;
  const maxFiles = positiveInteger(values['max-files'], '--max-files');
  const maxSubmissions = positiveInteger(values['max-submissions'], '--max-submissions');
  const retention = durationHours(values.retention, '--retention');
  const expires = durationHours(values.expires, '--expires');
  const params: CreateIntakeParams = {
    title: values.title,
    ...(key ? { owner_public_key: { kem: key.kem, public_key: key.public_key } } : { encryption_mode: 'server' }),
    ...(values.instructions ? { instructions: values.instructions } : {}),
    ...(retention !== undefined ? { retention_hours: retention } : {}),
    ...(expires !== undefined ? { expires_in_hours: expires } : {}),
    ...(maxFiles !== undefined || maxSubmissions !== undefined
      ? {
          limits: {
            ...(maxFiles !== undefined ? { max_files: maxFiles } : {}),
            ...(maxSubmissions !== undefined ? { max_submissions: maxSubmissions } : {}),
          },
        }
      : {}),
    ...(values.notify ? { notify: values.notify } : {}),
    ...(values['allow-metadata'] ? { metadata_policy: 'allow' as const } : {}),
  };
  const created = await ctx.client().intakes.create(params);
  if (ctx.json) return printJson(created);
  printIntake(created);
  printLine();
  note('Publishable key, to embed in a page or give to submitters (it can only submit here):');
  printLine(created.publishable_key.key);
  note('The page to give submitters, with that key after its #:');
  printLine(created.publishable_key.page_url);
}

async function list(argv: string[], ctx: Context): Promise<void> {
  const { limit, all } = listArguments(argv, [], USAGE);
  const request = ctx.client().intakes.list({ limit });
  await listOutput(ctx, request, all, (rows: Intake[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (i) => i.id },
        { header: 'TITLE', value: (i) => i.title, maxWidth: 40 },
        { header: 'MODE', value: (i) => i.encryption_mode },
        { header: 'STATUS', value: (i) => i.status },
        { header: 'SUBMISSIONS', value: (i) => i.submissions_count },
        { header: 'CREATED', value: (i) => formatTime(i.created_at) },
      ],
      'No intakes.',
    ),
  );
}

async function show(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['INTAKE_ID'], USAGE);
  const found = await ctx.client().intakes.get(id);
  if (ctx.json) return printJson(found);
  printIntake(found);
}

async function docs(argv: string[], ctx: Context): Promise<void> {
  const { positionals, limit, all } = listArguments(argv, ['INTAKE_ID'], USAGE);
  const [id = ''] = positionals;
  const request = ctx.client().intakes.listDocuments(id, { limit });
  await listOutput(ctx, request, all, (rows: IntakeDocument[]) =>
    printTable(
      rows,
      [
        { header: 'ID', value: (d) => d.id },
        { header: 'STATUS', value: (d) => d.status },
        { header: 'FILES', value: (d) => d.files_count },
        { header: 'SIZE', value: (d) => formatBytes(d.total_size_bytes) },
        { header: 'REFERENCE', value: (d) => d.client_reference, maxWidth: 30 },
        { header: 'RECEIVED', value: (d) => formatTime(d.received_at) },
      ],
      'No documents.',
    ),
  );
}

/** Downloads a document's files into DIR, decrypting end-to-end ones here with the key file. */
async function get(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { key: { type: 'string' }, output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
    USAGE,
  );
  const [intakeId = '', docId = ''] = expectPositionals(positionals, ['INTAKE_ID', 'DOC_ID'], USAGE);
  const client = ctx.client();
  const document = await client.intakes.getDocument(intakeId, docId);
  const endToEnd = document.encryption.mode === 'e2e_asym';
  if (endToEnd && !values.key) {
    throw new UsageError('This document is end-to-end encrypted: give --key KEY_FILE, the file `keygen` wrote.');
  }
  const privateKey = values.key ? privateKeyOf(await readKeyFile(values.key), values.key) : undefined;
  const waiting = document.files.filter((file) => !file.download_url);
  if (waiting.length > 0) {
    throw new CliError(`Document ${docId} is ${document.status}: its files cannot be downloaded now.`);
  }
  const directory = resolve(values.output ?? '.');
  const sink = toDirectory(directory, { overwrite: values.force ?? false });
  await sink.check(document.files);
  const written: Array<{ id: string; name: string; path: string; size: number }> = [];
  for (const file of document.files) {
    const content = await client.intakes.openFile(document, file.id, { privateKey });
    await content.pipeTo(await sink(file));
    written.push({ id: file.id, name: file.name, path: sink.paths.get(file.id) ?? directory, size: file.size_bytes });
  }
  if (ctx.json) return printJson({ object: 'intake_download', document: document.id, directory, files: written });
  note(`Received ${written.length} ${written.length === 1 ? 'file' : 'files'} of ${document.id}.`);
  for (const file of written) printLine(file.path);
}

/** Sends files to an intake with its publishable key, encrypting them here when it is end to end. */
async function submit(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    { 'publishable-key': { type: 'string' }, reference: { type: 'string' } },
    USAGE,
  );
  const [intakeId, ...files] = positionals;
  if (!intakeId || files.length === 0) throw new UsageError('Give an intake and at least one file.', `Usage: ${USAGE}`);
  const publishableKey = values['publishable-key'];
  if (!publishableKey) throw new UsageError('--publishable-key cip_… is required.', `Usage: ${USAGE}`);
  // The publishable key, not the profile's API key: submitting is what a stranger to the workspace does.
  const client = new Valise({ apiKey: publishableKey, baseUrl: ctx.settings.baseUrl });
  const submission = await client.intakes.send(intakeId, {
    files,
    source: 'api',
    ...(values.reference ? { client_reference: values.reference } : {}),
  });
  if (ctx.json) return printJson(submission);
  note(`Submitted ${files.length} ${files.length === 1 ? 'file' : 'files'}:`);
  printLine(submission.document.id);
}

async function close(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['INTAKE_ID'], USAGE);
  const closed = await ctx.client().intakes.close(id);
  if (ctx.json) return printJson(closed);
  printLine(`Intake ${closed.id} is ${closed.status}; its documents stay.`);
}

async function destroy(argv: string[], ctx: Context): Promise<void> {
  const { positionals } = parseCommand(argv, {}, USAGE);
  const [id = ''] = expectPositionals(positionals, ['INTAKE_ID'], USAGE);
  const deleted = await ctx.client().intakes.delete(id);
  if (ctx.json) return printJson(deleted);
  printLine(`Deleted intake ${deleted.id} and ${deleted.documents_deleted} documents.`);
}

function printIntake(found: Intake): void {
  printFields([
    ['id', found.id],
    ['title', found.title],
    ['status', found.closed_reason ? `${found.status} (${found.closed_reason})` : found.status],
    ['mode', found.encryption_mode],
    [
      'key',
      found.owner_public_key
        ? `${found.owner_public_key.kem}, fingerprint ${found.owner_public_key.fingerprint}`
        : null,
    ],
    ['page', found.page_url],
    ['submissions', found.submissions_count],
    ['retention', `${found.retention_hours} h`],
    ['expires', formatTime(found.expires_at)],
  ]);
}

async function readKeyFile(path: string): Promise<KeyFile> {
  let parsed: Partial<KeyFile>;
  try {
    parsed = JSON.parse(await readFile(resolve(path), 'utf8')) as Partial<KeyFile>;
  } catch (error) {
    throw new CliError(`Cannot read the key file ${path}: ${(error as Error).message}`);
  }
  if (!parsed.kem || !INTAKE_KEMS.includes(parsed.kem) || typeof parsed.public_key !== 'string') {
    throw new CliError(`${path} is not a key file written by \`valise intake keygen\`.`);
  }
  return {
    kem: parsed.kem,
    public_key: parsed.public_key,
    ...(parsed.private_key ? { private_key: parsed.private_key } : {}),
  };
}

function privateKeyOf(key: KeyFile, path: string): Uint8Array {
  if (!key.private_key) throw new CliError(`${path} holds no private key.`);
  return new Uint8Array(Buffer.from(key.private_key, 'base64url'));
}

/** As the API shows it: the first 16 bytes of SHA-256 of the public key, in hex. */
function fingerprint(publicKey: string): string {
  return createHash('sha256').update(Buffer.from(publicKey, 'base64url')).digest('hex').slice(0, 32);
}
