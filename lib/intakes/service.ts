import { createEventQueries } from '../db/queries/events.ts';
import { createIntakeQueries, type IntakeChanges, type IntakeRow } from '../db/queries/intakes.ts';
import { DomainError } from '../errors.ts';
import { requestView } from '../events/intake-events.ts';
import type { PageQuery } from '../pagination.ts';
import { SANDBOX_LIMITS, sandboxLimits } from '../sandbox.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import type { Environment } from '../vocabulary.ts';
import { randomId } from './ids.ts';
import { KEM_SIZES } from './kems.ts';
import { presentIntake } from './present.ts';
import { issuePublishableKey, presentPublishableKey } from './publishable-keys.ts';
import type { IntakeEncryptionMode, IntakeKem, IntakeStatus, MetadataPolicy } from './vocabulary.ts';

// Intakes, as their owner manages them (docs/intakes.md). Submitters' routes
// are in submissions.ts, documents in documents.ts.

const HOUR_MS = 3_600_000;
export const INTAKE_DEFAULTS = { retentionHours: 720, maxFiles: 20, maxBytes: 5 * 1024 ** 3 } as const;

/**
 * The defaults and caps of an intake's limits in the sandbox (docs/intakes.md, "Sandbox"): the
 * spec's 10 files of 10 MiB, so at most 10 files and 100 MiB per submission, which are also the
 * defaults there.
 */
const SANDBOX_INTAKE = {
  maxFiles: SANDBOX_LIMITS.maxFiles,
  maxBytes: SANDBOX_LIMITS.maxFiles * SANDBOX_LIMITS.maxFileBytes,
} as const;

const intakeDefaults = (environment: Environment) => (sandboxLimits(environment) ? SANDBOX_INTAKE : INTAKE_DEFAULTS);

/** Limits a sandbox intake may not be given, named by their member (`limits.max_files`). */
function checkSandboxLimits(environment: Environment, limits: IntakeLimitsInput | undefined) {
  if (!sandboxLimits(environment) || !limits) return;
  if (limits.max_files !== undefined && limits.max_files > SANDBOX_INTAKE.maxFiles) {
    throw new DomainError('validation_error', `A sandbox intake takes at most ${SANDBOX_INTAKE.maxFiles} files.`, {
      param: 'limits.max_files',
    });
  }
  if (limits.max_bytes !== undefined && limits.max_bytes > SANDBOX_INTAKE.maxBytes) {
    throw new DomainError(
      'validation_error',
      `A sandbox intake takes at most ${SANDBOX_INTAKE.maxBytes} bytes per submission.`,
      { param: 'limits.max_bytes' },
    );
  }
}

export type IntakeLimitsInput = {
  max_files?: number | undefined;
  max_bytes?: number | undefined;
  max_submissions?: number | null | undefined;
  /** Null: the configured default (INTAKE_SUBMISSIONS_PER_HOUR, _PER_DAY). */
  submissions_per_hour?: number | null | undefined;
  submissions_per_day?: number | null | undefined;
};

export type CreateIntakeInput = {
  title: string;
  instructions?: string | null | undefined;
  encryption_mode?: IntakeEncryptionMode | undefined;
  owner_public_key?: { kem?: IntakeKem | undefined; public_key: string } | undefined;
  metadata_policy?: MetadataPolicy | undefined;
  retention_hours?: number | undefined;
  limits?: IntakeLimitsInput | undefined;
  notify?: string[] | undefined;
  expires_in_hours?: number | undefined;
};

export async function createIntake(services: Services, caller: Caller, input: CreateIntakeInput) {
  const mode = input.encryption_mode ?? (input.owner_public_key ? 'e2e_asym' : 'server');
  const ownerKey = ownerKeyOf(mode, input.owner_public_key);
  const tenant = tenantOf(caller);
  checkSandboxLimits(tenant.environment, input.limits);
  const defaults = intakeDefaults(tenant.environment);
  const { intake, key } = await services.db.transaction(async (tx) => {
    const queries = createIntakeQueries(tx);
    const intake = await queries.insert({
      ...tenant,
      id: `in_${randomId()}`,
      userId: caller.userId,
      title: input.title,
      instructions: input.instructions ?? null,
      encryptionMode: mode,
      ownerKey,
      metadataPolicy: input.metadata_policy ?? 'deny',
      retentionHours: input.retention_hours ?? INTAKE_DEFAULTS.retentionHours,
      maxFiles: input.limits?.max_files ?? defaults.maxFiles,
      maxBytes: input.limits?.max_bytes ?? defaults.maxBytes,
      maxSubmissions: input.limits?.max_submissions ?? null,
      submissionsPerHour: input.limits?.submissions_per_hour ?? null,
      submissionsPerDay: input.limits?.submissions_per_day ?? null,
      notifyEmails: input.notify ?? [],
      expiresAt: input.expires_in_hours === undefined ? null : new Date(Date.now() + input.expires_in_hours * HOUR_MS),
    });
    const key = await issuePublishableKey(services, queries, intake, null);
    await createEventQueries(tx).record(tenant, 'request.created', { request: requestView(intake) });
    if (intake.expires_at) await services.workflows.intakes.watchExpiry(tenant, intake.id);
    return { intake, key };
  });
  return { ...presentIntake(services.config, intake), publishable_key: presentPublishableKey(services, key) };
}

export type ListIntakesInput = PageQuery & { status?: IntakeStatus | undefined };

export async function listIntakes(services: Services, caller: Caller, input: ListIntakesInput) {
  const filters = { status: input.status ?? null };
  const window = services.paginator.open('intakes', filters, input);
  const rows = await createIntakeQueries(services.db).list(tenantOf(caller), { status: input.status }, window);
  return services.paginator.close('intakes', filters, input, rows, (row) => presentIntake(services.config, row));
}

export async function getIntake(services: Services, caller: Caller, id: string) {
  return presentIntake(services.config, await findIntake(services, caller, id));
}

/** The caller's live intake, or 404. */
export async function findIntake(services: Services, caller: Caller, id: string): Promise<IntakeRow> {
  const intake = await createIntakeQueries(services.db).find(tenantOf(caller), id);
  if (!intake) throw new DomainError('not_found', 'No such intake.');
  return intake;
}

export type UpdateIntakeInput = {
  title?: string | undefined;
  instructions?: string | null | undefined;
  metadata_policy?: MetadataPolicy | undefined;
  retention_hours?: number | undefined;
  limits?: IntakeLimitsInput | undefined;
  notify?: string[] | undefined;
  /** Hours from now; null removes the expiry. */
  expires_in_hours?: number | null | undefined;
};

/**
 * Changes an intake. Lifting what closed it (a later expiry on an expired intake, a higher
 * `max_submissions` on one that reached it) reopens it; the owner's own close stands.
 */
export async function updateIntake(services: Services, caller: Caller, id: string, input: UpdateIntakeInput) {
  const tenant = tenantOf(caller);
  checkSandboxLimits(tenant.environment, input.limits);
  const updated = await services.db.transaction(async (tx) => {
    const queries = createIntakeQueries(tx);
    const intake = await queries.find(tenant, id, true);
    if (!intake) throw new DomainError('not_found', 'No such intake.');
    const changes: IntakeChanges = {
      title: input.title,
      instructions: input.instructions,
      metadataPolicy: input.metadata_policy,
      retentionHours: input.retention_hours,
      maxFiles: input.limits?.max_files,
      maxBytes: input.limits?.max_bytes,
      maxSubmissions: input.limits?.max_submissions,
      submissionsPerHour: input.limits?.submissions_per_hour,
      submissionsPerDay: input.limits?.submissions_per_day,
      notifyEmails: input.notify,
      expiresAt:
        input.expires_in_hours === undefined
          ? undefined
          : input.expires_in_hours === null
            ? null
            : new Date(Date.now() + input.expires_in_hours * HOUR_MS),
    };
    let row = await queries.update(id, changes);
    const expiryLifted = row.status === 'expired' && (row.expires_at === null || row.expires_at.getTime() > Date.now());
    const capLifted =
      row.status === 'closed' &&
      row.closed_reason === 'max_submissions' &&
      (row.max_submissions === null || row.submissions_count < row.max_submissions);
    if (expiryLifted || capLifted) row = (await queries.reopen(id)) ?? row;
    if (changes.expiresAt !== undefined) await services.workflows.intakes.watchExpiry(tenant, id);
    return row;
  });
  return presentIntake(services.config, updated);
}

/** Stops an intake taking submissions; its documents stay. Closing a closed intake changes nothing. */
export async function closeIntake(services: Services, caller: Caller, id: string) {
  const tenant = tenantOf(caller);
  const intake = await services.db.transaction(async (tx) => {
    const queries = createIntakeQueries(tx);
    const found = await queries.find(tenant, id, true);
    if (!found) throw new DomainError('not_found', 'No such intake.');
    const closed = await queries.end(id, 'closed', 'owner');
    if (!closed) return found;
    await createEventQueries(tx).record(tenant, 'request.completed', { request: requestView(closed) });
    return closed;
  });
  return presentIntake(services.config, intake);
}

/**
 * Deletes an intake with every document: each document's keys are destroyed in the transaction,
 * so nothing stored can be opened from then on, and each document's workflow removes its blobs.
 */
export async function deleteIntake(services: Services, caller: Caller, id: string) {
  const tenant = tenantOf(caller);
  const { intake, documentIds } = await services.db.transaction(async (tx) => {
    const queries = createIntakeQueries(tx);
    const found = await queries.find(tenant, id, true);
    if (!found) throw new DomainError('not_found', 'No such intake.');
    const documentIds = await queries.liveDocumentIds(id);
    for (const documentId of documentIds) await queries.destroyDocument(documentId);
    const intake = await queries.markDeleted(id);
    if (!intake) throw new DomainError('not_found', 'No such intake.');
    await createEventQueries(tx).record(tenant, 'request.deleted', { request: requestView(intake) });
    return { intake, documentIds };
  });
  // The keys are gone already; a lost signal leaves ciphertext no one can open until the
  // document's own retention timer removes it.
  await Promise.allSettled([
    services.workflows.intakes.intakeDeleted(id),
    ...documentIds.map((documentId) => services.workflows.intakes.documentDeleted(documentId)),
  ]);
  return { id: intake.id, object: 'intake' as const, deleted: true as const, documents_deleted: documentIds.length };
}

function ownerKeyOf(mode: IntakeEncryptionMode, key: CreateIntakeInput['owner_public_key']) {
  if (mode === 'server') {
    if (key) {
      throw new DomainError('validation_error', 'owner_public_key is for `e2e_asym` intakes only.', {
        param: 'owner_public_key',
      });
    }
    return null;
  }
  if (!key) {
    throw new DomainError('validation_error', 'An `e2e_asym` intake needs the owner\u2019s public key.', {
      param: 'owner_public_key',
    });
  }
  const kem = key.kem ?? 'MLKEM768-X25519';
  const publicKey = Buffer.from(key.public_key, 'base64url');
  if (publicKey.length !== KEM_SIZES[kem].publicKey || publicKey.toString('base64url') !== key.public_key) {
    throw new DomainError(
      'validation_error',
      `A ${kem} public key is ${KEM_SIZES[kem].publicKey} bytes, in base64url without padding.`,
      { param: 'owner_public_key.public_key' },
    );
  }
  return { kem, publicKey };
}
