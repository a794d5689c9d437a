import { describe, expectFunction, expectInteger, expectObject, expectOneOf, expectSignal } from './arguments.ts';
import { type HttpClient, UPLOAD_PART_BYTES } from './client.ts';
import { fileKey, shareLinkWithKey } from './crypto/link-key.ts';
import { DEFAULT_SEGMENT_SIZE, encryptedSize, generateKey, generateNoncePrefix } from './crypto/val1.ts';
import { base64Decode, base64UrlEncode } from './encoding.ts';
import { InvalidArgumentError, isRecord, ValiseError } from './errors.ts';
import { REQUEST_ENUMS } from './generated/openapi.ts';
import { type FileSource, type SendFileInput, toFileSources } from './sources.ts';
import type { CreatedTransfer, CreateTransferParams, EncryptionMode } from './types.ts';
import { uploadFile } from './upload.ts';

// transfers.send: create the transfer, then upload each file in turn. In e2e
// mode each file is encrypted here, so only ciphertext leaves the machine, and
// the link key is put in the share link's fragment.

export type SendProgress = {
  fileIndex: number;
  fileName: string;
  /** Bytes of this file the server has or is receiving (ciphertext size in e2e mode). */
  fileBytesUploaded: number;
  fileBytesTotal: number;
  /** Across every file. */
  bytesUploaded: number;
  bytesTotal: number;
  /** Bytes actually sent by this call (a resumed call does not resend what was stored). */
  bytesSentThisCall: number;
};

export type SendParams = Omit<CreateTransferParams, 'files' | 'encryption_mode'> & {
  files: SendFileInput[];
  /** `server` (default): the server encrypts. `e2e`: encrypted here; the key stays in the link. */
  mode?: EncryptionMode;
  onProgress?: ((progress: SendProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Automatic resumes per file after a network failure or a 5xx; default 3. */
  maxResumes?: number | undefined;
};

export type ResumeParams = Pick<SendParams, 'files' | 'onProgress' | 'signal' | 'maxResumes'>;

/**
 * Everything needed to finish an interrupted send later, JSON-serialisable. In e2e mode it holds
 * the link key: keep it as secret as the link.
 */
export type SendSession = {
  mode: EncryptionMode;
  transfer: CreatedTransfer['transfer'];
  /** The share link; in e2e mode with `#k=<key>`. */
  shareUrl: string;
  files: Array<{
    fileId: string;
    name: string;
    url: string;
    storedSize: number;
    plaintextSize: number;
    /** The upload URL's `part_size`; absent from sessions saved before files had their own (8 MiB then). */
    partSize?: number | undefined;
  }>;
  /** e2e only: base64url link key, and each file's base64url nonce prefix (same order as `files`). */
  e2e: { linkKey: string; noncePrefixes: string[]; segmentSize: number } | null;
};

export type SendResult = {
  transfer: CreatedTransfer['transfer'];
  /** Share this. In e2e mode it carries the key in its fragment (`#k=…`), which browsers never send. */
  shareUrl: string;
  session: SendSession;
};

/** Thrown when an upload fails for good: `session` lets `transfers.resume` finish it. */
export class SendInterruptedError extends ValiseError {
  readonly session: SendSession;

  constructor(session: SendSession, cause: ValiseError | Error) {
    super({
      code: cause instanceof ValiseError ? cause.code : 'connection_error',
      status: cause instanceof ValiseError ? cause.status : 0,
      requestId: cause instanceof ValiseError ? cause.requestId : null,
      param: cause instanceof ValiseError ? cause.param : null,
      message: `Upload interrupted (${cause.message}); resume it with transfers.resume(error.session, { files })`,
      cause,
    });
    this.session = session;
  }
}

export type PrepareParams = Omit<SendParams, 'onProgress' | 'maxResumes'>;

/**
 * Creates the transfer and, in e2e mode, its link key, without uploading: the session it returns can
 * be saved (it is JSON) before any byte leaves, so even a process killed mid-upload can resume.
 */
export async function prepareSend(
  create: (body: CreateTransferParams) => Promise<CreatedTransfer>,
  params: PrepareParams,
): Promise<SendSession> {
  expectObject(params, 'params');
  const { files, mode = 'server', signal, ...transferFields } = params;
  expectOneOf(mode, 'mode', REQUEST_ENUMS['POST /v1/transfers'].encryption_mode);
  expectSignal(signal, 'signal');
  // Every file is checked (and each path opened) before the transfer is created.
  const sources = await toFileSources(files);
  const S = DEFAULT_SEGMENT_SIZE;
  const created = await create({
    ...transferFields,
    encryption_mode: mode,
    files: sources.map((source) => ({
      name: source.name,
      // In e2e mode the server stores (and so is told the size of) the encrypted blob.
      size: mode === 'e2e' ? encryptedSize(source.size, S) : source.size,
      ...(source.type ? { mime_type: source.type } : {}),
    })),
  });
  const linkKey = mode === 'e2e' ? generateKey() : null;
  return {
    mode,
    transfer: created.transfer,
    shareUrl: linkKey ? shareLinkWithKey(created.share_url, linkKey) : created.share_url,
    files: created.upload_urls.map((entry, index) => ({
      fileId: entry.file_id,
      name: entry.name,
      url: entry.url,
      storedSize: entry.size,
      plaintextSize: sources[index]?.size ?? 0,
      partSize: entry.part_size,
    })),
    e2e: linkKey
      ? {
          linkKey: base64UrlEncode(linkKey),
          noncePrefixes: sources.map(() => base64UrlEncode(generateNoncePrefix())),
          segmentSize: S,
        }
      : null,
  };
}

export async function uploadAll(
  http: HttpClient,
  session: SendSession,
  params: ResumeParams,
  resume: boolean,
): Promise<SendResult> {
  if (!isRecord(session) || !Array.isArray(session.files) || typeof session.shareUrl !== 'string') {
    throw new InvalidArgumentError(
      'session',
      `expected the session of transfers.prepare or of a SendInterruptedError; got ${describe(session)}`,
    );
  }
  checkProgressParams(params);
  const sources = await toFileSources(params.files);
  if (sources.length !== session.files.length) {
    const count = session.files.length;
    throw new InvalidArgumentError(
      'files',
      `the session has ${count} file${count === 1 ? '' : 's'}; ${sources.length} were given (the same files, in the same order)`,
    );
  }
  // All checked before any byte leaves: a changed file must start over in a new transfer.
  for (const [index, file] of session.files.entries()) {
    const source = sources[index] as FileSource;
    if (source.size !== file.plaintextSize) {
      throw new InvalidArgumentError(
        `files[${index}]`,
        `${source.name} is ${source.size} bytes; the session declared ${file.plaintextSize} (${file.name}). A changed file must be sent in a new transfer`,
      );
    }
  }
  const bytesTotal = session.files.reduce((sum, f) => sum + f.storedSize, 0);
  let bytesBefore = 0;
  let bytesSentThisCall = 0;
  for (const [index, file] of session.files.entries()) {
    const source = sources[index] as FileSource;
    const e2e = session.e2e
      ? {
          key: await fileKey(base64Decode(session.e2e.linkKey), file.fileId, session.files.length),
          noncePrefix: base64Decode(session.e2e.noncePrefixes[index] ?? ''),
          segmentSize: session.e2e.segmentSize,
        }
      : null;
    let uploadedThisRequest = 0;
    let currentRequest = -1;
    try {
      const target = { url: file.url, size: file.storedSize, partSize: file.partSize ?? UPLOAD_PART_BYTES, e2e };
      await uploadFile(http, target, source, {
        resume,
        signal: params.signal,
        maxResumes: params.maxResumes,
        onBytes: (sent, stored, request) => {
          if (request !== currentRequest) {
            currentRequest = request;
            uploadedThisRequest = 0;
          }
          uploadedThisRequest += sent;
          bytesSentThisCall += sent;
          params.onProgress?.({
            fileIndex: index,
            fileName: file.name,
            fileBytesUploaded: stored + uploadedThisRequest,
            fileBytesTotal: file.storedSize,
            bytesUploaded: bytesBefore + stored + uploadedThisRequest,
            bytesTotal,
            bytesSentThisCall,
          });
        },
      });
    } catch (error) {
      throw new SendInterruptedError(session, error instanceof Error ? error : new Error(String(error)));
    }
    bytesBefore += file.storedSize;
  }
  return { transfer: session.transfer, shareUrl: session.shareUrl, session };
}

/** The options `send` and `resume` share besides the files. */
export function checkProgressParams(params: unknown): void {
  expectObject(params, 'params');
  expectFunction(params.onProgress, 'onProgress', 'a function', true);
  expectInteger(params.maxResumes, 'maxResumes', 0);
  expectSignal(params.signal, 'signal');
}
