import { randomUUID } from 'node:crypto';
import { encryptedSize } from '../crypto/segmented-aead.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createIntakeQueries, type IntakeFileRow, type IntakeRow } from '../db/queries/intakes.ts';
import { DomainError } from '../errors.ts';
import { requestView, submissionView } from '../events/intake-events.ts';
import { checkDailyQuota, checkFileSize, sandboxLimits } from '../sandbox.ts';
import type { Services } from '../services.ts';
import { checkPlannable, storedSize } from '../uploads/parts.ts';
import { uploadUrlEntry } from '../uploads/upload-urls.ts';
import { randomId } from './ids.ts';
import { KEM_SIZES, SEALED_KEY_BYTES } from './kems.ts';
import { presentForm, submissionBudget } from './present.ts';
import type { Submitter } from './publishable-keys.ts';
import { intakeUploads } from './upload-target.ts';
import type { IntakeKem, IntakeSource } from './vocabulary.ts';

// What a submitter does with a publishable key: read the intake's form, and
// start a submission whose files are then uploaded like a transfer's
// (docs/intakes.md, "Publishable keys").

const HOUR_MS = 3_600_000;
/** A VAL1 nonce prefix is 7 bytes. */
const IV_BYTES = 7;

export async function getForm(services: Services, submitter: Submitter) {
  return presentForm(await submitterIntake(services, submitter));
}

export type SubmissionFileInput = {
  name: string;
  size: number;
  mime_type?: string | undefined;
  iv?: string | undefined;
};

export type StartSubmissionInput = {
  files: SubmissionFileInput[];
  client_reference?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  source?: IntakeSource | undefined;
  envelope?: { kem: IntakeKem; wrapped_symmetric_key: string; chunk_size: number } | undefined;
};

/**
 * Starts a submission: checks the intake takes it (open, within its limits, the envelope its mode
 * wants), counts it, creates the document and its files, and starts the document's workflow, all
 * in one transaction. Answers the document and one upload URL per file.
 */
export async function startSubmission(services: Services, submitter: Submitter, input: StartSubmissionInput) {
  const tenant = { workspaceId: submitter.workspaceId, environment: submitter.environment };
  const { document, files, intake } = await services.db.transaction(async (tx) => {
    const queries = createIntakeQueries(tx);
    // Locked so that concurrent submissions count against max_submissions one at a time.
    const locked = await queries.findById(submitter.intakeId, true);
    const intake = checkTakes(locked, submitter);
    await checkBudget(services, queries, intake);
    checkFiles(intake, input);
    checkSandboxFiles(intake, input);
    await checkDailyQuota(tx, tenant, 'intake_submission', 'intake submissions');
    const envelope = checkEnvelope(intake, input);
    checkPlans(input, envelope, services.config.transfers.uploads.maxParts);
    const counted = await queries.countSubmission(intake.id);
    const uploadDeadline = new Date(Date.now() + services.config.transfers.uploadWindowHours * HOUR_MS);
    const document = await queries.insertDocument({
      ...tenant,
      id: `doc_${randomId()}`,
      intakeId: intake.id,
      source: input.source ?? 'api',
      publishableKeyId: submitter.publishableKeyId,
      clientReference: input.client_reference ?? null,
      metadata: intake.metadata_policy === 'allow' ? (input.metadata ?? null) : null,
      envelope,
      uploadDeadline,
    });
    const files: IntakeFileRow[] = [];
    for (const [position, file] of input.files.entries()) {
      const id = randomUUID();
      // e2e_asym: the upload carries the VAL1 blob, whose size follows from the plaintext's.
      const size = envelope ? encryptedSize(file.size, envelope.chunkSize) : file.size;
      files.push(
        await queries.insertFile(document.id, id, {
          position,
          name: file.name,
          size,
          plaintextSize: file.size,
          mimeType: file.mime_type ?? 'application/octet-stream',
          iv: file.iv ?? null,
          objectKey: `${intake.environment}/${intake.workspace_id}/intakes/${intake.id}/${document.id}/${id}`,
          encryptedSize: envelope ? size : storedSize(size, 'server'),
        }),
      );
    }
    const events = createEventQueries(tx);
    await events.record(tenant, 'request.submitted', {
      request: requestView(counted),
      submission: submissionView(document, files),
    });
    let current = counted;
    if (counted.max_submissions !== null && counted.submissions_count >= counted.max_submissions) {
      current = (await queries.end(intake.id, 'closed', 'max_submissions')) ?? counted;
      await events.record(tenant, 'request.completed', { request: requestView(current) });
    }
    await services.workflows.intakes.startDocument(tenant, document.id);
    return { document, files, intake: current };
  });
  return {
    object: 'intake_submission' as const,
    document: {
      id: document.id,
      object: 'intake_document' as const,
      intake_id: intake.id,
      status: document.status,
      client_reference: document.client_reference,
      upload_deadline: document.upload_deadline,
      created_at: document.created_at,
    },
    upload_urls: files.map((file) => ({
      ...uploadUrlEntry(
        services,
        { kind: intakeUploads.kind, owner: document.id, file: file.id },
        file,
        document.upload_deadline,
      ),
      plaintext_size: file.plaintext_size,
    })),
  };
}

async function submitterIntake(services: Services, submitter: Submitter): Promise<IntakeRow> {
  const intake = await createIntakeQueries(services.db).findById(submitter.intakeId);
  if (!intake || intake.status === 'deleted') throw new DomainError('not_found', 'No such intake.');
  return intake;
}

function checkTakes(intake: IntakeRow | null, submitter: Submitter): IntakeRow {
  if (!intake || intake.status === 'deleted' || intake.workspace_id !== submitter.workspaceId) {
    throw new DomainError('not_found', 'No such intake.');
  }
  const expired = intake.status === 'expired' || (intake.expires_at && intake.expires_at.getTime() <= Date.now());
  if (intake.status !== 'open' || expired) {
    const why = expired ? 'expired' : 'closed';
    throw new DomainError('not_found', `This intake is ${why} and accepts no submissions.`, {
      kind: 'gone',
      details: { status: why },
    });
  }
  return intake;
}

/**
 * Refuses a submission past the intake's budget: each one starts a workflow, records events (and
 * with them rules and webhooks) and mails every notify address, so an anonymous page must not
 * start them without end. Counted over the last hour and the last 24 hours, under the intake's
 * lock; 429 until the oldest submission of the spent window leaves it.
 */
async function checkBudget(services: Services, queries: ReturnType<typeof createIntakeQueries>, intake: IntakeRow) {
  const budget = submissionBudget(services.config, intake);
  const windows = [
    { reason: 'submissions_per_hour', limit: budget.submissions_per_hour, ms: HOUR_MS, per: 'hour' },
    { reason: 'submissions_per_day', limit: budget.submissions_per_day, ms: 24 * HOUR_MS, per: 'day' },
  ] as const;
  for (const window of windows) {
    const recent = await queries.recentSubmissions(intake.id, window.ms);
    if (recent.count < window.limit) continue;
    const freesIn = Math.ceil(((recent.frees_at?.getTime() ?? Date.now()) - Date.now()) / 1000);
    throw new DomainError(
      'rate_limited',
      `This intake takes at most ${window.limit} submissions per ${window.per}. Retry in ${Math.max(1, freesIn)} seconds.`,
      { retryAfterSeconds: Math.max(1, freesIn), details: { reason: window.reason } },
    );
  }
}

function checkFiles(intake: IntakeRow, input: StartSubmissionInput) {
  if (input.files.length > intake.max_files) {
    throw new DomainError('validation_error', `This intake takes at most ${intake.max_files} files per submission.`, {
      param: 'files',
    });
  }
  const total = input.files.reduce((sum, file) => sum + file.size, 0);
  if (total > intake.max_bytes) {
    throw new DomainError('validation_error', `This intake takes at most ${intake.max_bytes} bytes per submission.`, {
      param: 'files',
    });
  }
  const names = new Set<string>();
  for (const [index, file] of input.files.entries()) {
    // The spec's `encryption.files` maps file names to their IVs: a name must say which file it is.
    if (names.has(file.name)) {
      throw new DomainError('validation_error', 'Two files of a submission cannot share a name.', {
        param: `files.${index}.name`,
      });
    }
    names.add(file.name);
  }
}

/**
 * The sandbox's 10 files of 10 MiB (docs/intakes.md, "Sandbox"), of the plaintext the submitter
 * declares, whatever limits an intake was given before they were capped.
 */
function checkSandboxFiles(intake: IntakeRow, input: StartSubmissionInput) {
  const limits = sandboxLimits(intake.environment);
  if (limits && input.files.length > limits.maxFiles) {
    throw new DomainError('validation_error', `A sandbox submission has at most ${limits.maxFiles} files.`, {
      param: 'files',
    });
  }
  for (const [index, file] of input.files.entries())
    checkFileSize(intake.environment, file.size, `files.${index}.size`);
}

/** Each file's upload, as declared: the plaintext, or in e2e_asym its VAL1 blob, must fit S3's limits. */
function checkPlans(input: StartSubmissionInput, envelope: { chunkSize: number } | null, maxParts: number) {
  for (const [index, file] of input.files.entries()) {
    const size = envelope ? encryptedSize(file.size, envelope.chunkSize) : file.size;
    checkPlannable(size, envelope ? 'e2e' : 'server', maxParts, `files.${index}.size`);
  }
}

function checkEnvelope(intake: IntakeRow, input: StartSubmissionInput) {
  const { envelope } = input;
  if (intake.encryption_mode === 'server') {
    if (envelope) {
      throw new DomainError('validation_error', 'This intake encrypts on the server: send no envelope.', {
        param: 'envelope',
      });
    }
    const withIv = input.files.findIndex((file) => file.iv !== undefined);
    if (withIv !== -1) {
      throw new DomainError('validation_error', 'This intake encrypts on the server: send no iv.', {
        param: `files.${withIv}.iv`,
      });
    }
    return null;
  }
  if (!envelope) {
    throw new DomainError(
      'validation_error',
      'This intake is end-to-end encrypted: send the envelope (docs/intake-encryption.md).',
      {
        param: 'envelope',
      },
    );
  }
  if (envelope.kem !== intake.owner_kem) {
    throw new DomainError('validation_error', `This intake's key is ${intake.owner_kem}.`, { param: 'envelope.kem' });
  }
  const wrapped = Buffer.from(envelope.wrapped_symmetric_key, 'base64url');
  if (
    wrapped.length !== KEM_SIZES[envelope.kem].enc + SEALED_KEY_BYTES ||
    wrapped.toString('base64url') !== envelope.wrapped_symmetric_key
  ) {
    throw new DomainError(
      'validation_error',
      `A ${envelope.kem} wrapped key is ${KEM_SIZES[envelope.kem].enc + SEALED_KEY_BYTES} bytes (enc, then the sealed key), in base64url without padding.`,
      { param: 'envelope.wrapped_symmetric_key' },
    );
  }
  for (const [index, file] of input.files.entries()) {
    const iv = file.iv === undefined ? null : Buffer.from(file.iv, 'base64url');
    if (!iv || iv.length !== IV_BYTES || iv.toString('base64url') !== file.iv) {
      throw new DomainError('validation_error', 'Each file needs its iv: the 7-byte VAL1 nonce prefix, base64url.', {
        param: `files.${index}.iv`,
      });
    }
  }
  return { kem: envelope.kem, wrappedSymmetricKey: envelope.wrapped_symmetric_key, chunkSize: envelope.chunk_size };
}
