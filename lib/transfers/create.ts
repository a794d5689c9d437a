import { randomUUID } from 'node:crypto';
import { hashPassword } from '../crypto/password.ts';
import { randomBase62 } from '../crypto/secrets.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createTransferQueries, type FileRow, type TransferRow } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import { transferCreatedView } from '../events/views.ts';
import { addressesOf, attachRecipients, recipientsByTransfer } from '../recipients/links.ts';
import type { Services } from '../services.ts';
import type { Caller, Tenant } from '../tenancy.ts';
import { checkPlannable, storedSize } from '../uploads/parts.ts';
import { uploadUrlEntry } from '../uploads/upload-urls.ts';
import type { EncryptionMode } from '../vocabulary.ts';
import { limitsFor, type TransferLimits } from './limits.ts';
import { presentTransfer, shareUrl } from './present.ts';
import { transferUploads } from './upload-target.ts';

export type CreateTransferInput = {
  files: Array<{ name: string; size: number; mime_type?: string | undefined }>;
  expires_in_hours?: number | undefined;
  max_downloads?: number | undefined;
  password?: string | undefined;
  recipient?: string | undefined;
  /** More addresses, each given a personal link; with `recipient`, the union (docs/recipients.md). */
  recipients?: string[] | undefined;
  transfer_title?: string | undefined;
  encryption_mode?: EncryptionMode | undefined;
  approval_required?: boolean | undefined;
  /** ISO 3166-1 alpha-2, upper case, each once; null or absent restricts nothing (docs/transfers.md, "Countries"). */
  allowed_countries?: string[] | null | undefined;
};

const HOUR_MS = 3_600_000;
/** The smallest valid blob of the segmented format: a header and one empty segment's tag. */
const MIN_E2E_BLOB = 32;

export async function createTransfer(services: Services, caller: Caller, input: CreateTransferInput) {
  const { config } = services;
  const tenant = { workspaceId: caller.workspaceId, environment: caller.environment };
  const limits = limitsFor(caller.environment, config);
  const mode = input.encryption_mode ?? 'server';
  checkLimits(limits, mode, input, config.transfers.uploads.maxParts);

  const now = Date.now();
  const expiresAt = new Date(now + (input.expires_in_hours ?? limits.defaultExpiryHours) * HOUR_MS);
  const uploadWindow = new Date(now + config.transfers.uploadWindowHours * HOUR_MS);
  const uploadDeadline = uploadWindow < expiresAt ? uploadWindow : expiresAt;
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const addresses = addressesOf(input);
  if (limits.transfersPerDay !== null)
    await checkDailyQuota(createTransferQueries(services.db), tenant, limits.transfersPerDay);

  // The workflow is started before the transaction, not inside it: a transaction holding one of the
  // pool's connections through a Temporal round trip caps creations at the pool's size over that
  // round trip (bench/README.md, "bench/rate.ts"). Started first, it is there for every transfer
  // committed; a transaction that then fails leaves a workflow whose first look never finds the
  // transfer, and it ends by itself (workflows/transferLifecycle.ts).
  const transferId = randomUUID();
  await services.workflows.transfers.start(tenant, transferId);

  const { transfer, files } = await services.db.transaction(async (tx) => {
    const transfers = createTransferQueries(tx);
    if (limits.transfersPerDay !== null)
      await checkDailyQuota(transfers, tenant, limits.transfersPerDay, { locked: true });
    const transfer = await transfers.insert({
      id: transferId,
      ...tenant,
      userId: caller.userId,
      shortCode: randomBase62(10),
      // An empty title is no title (the response publishes a title as non-empty or null).
      title: input.transfer_title || null,
      encryptionMode: mode,
      expiresAt,
      uploadDeadline,
      maxDownloads: input.max_downloads ?? limits.maxDownloads,
      passwordHash,
      // The first address: what `recipient` says, and what rules' `recipient_email` matches.
      recipient: addresses[0] ?? null,
      approvalRequired: input.approval_required ?? false,
      allowedCountries: input.allowed_countries ?? null,
    });
    // Key material is made when each upload starts (lib/uploads/receive.ts), fresh for every restart.
    const files = await transfers.insertFiles(
      transfer.id,
      input.files.map((file, position) => {
        const id = randomUUID();
        return {
          id,
          position,
          name: file.name,
          size: file.size,
          mimeType: file.mime_type ?? 'application/octet-stream',
          objectKey: `${transfer.environment}/${transfer.workspace_id}/${transfer.id}/${id}`,
          encryptedSize: storedSize(file.size, mode),
        };
      }),
    );
    await attachRecipients(tx, tenant, transfer.id, addresses);
    const events = createEventQueries(tx);
    const data = { transfer: transferCreatedView(transfer, files) };
    await events.record(tenant, 'transfer.created', data);
    if (mode === 'e2e') await events.record(tenant, 'transfer.e2e_created', data);
    return { transfer, files };
  });

  // Most transfers are sent to no one: then there are no links to read back.
  const links = addresses.length > 0 ? await recipientsByTransfer(services, tenant, [transfer.id]) : undefined;
  const recipients = links?.get(transfer.id) ?? [];
  return {
    transfer: presentTransfer(config, transfer, files, recipients),
    upload_urls: files.map((file) => uploadUrlFor(services, transfer, file)),
    share_url: shareUrl(config, transfer.short_code),
  };
}

/**
 * The rolling 24-hour quota. Counted once before the workflow starts, so a workspace past its quota
 * starts none, and again under a lock held until the creating transaction ends (`locked`):
 * concurrent creates of one workspace and environment take turns, so each counts the ones
 * committed before it and the quota holds.
 */
async function checkDailyQuota(
  transfers: ReturnType<typeof createTransferQueries>,
  tenant: Tenant,
  perDay: number,
  { locked = false } = {},
) {
  if (locked) await transfers.lockQuota(tenant);
  const recent = await transfers.countCreatedSince(tenant, new Date(Date.now() - 24 * HOUR_MS));
  if (recent >= perDay) {
    throw new DomainError('rate_limited', `Sandbox workspaces may create ${perDay} transfers per 24 hours.`, {
      retryAfterSeconds: 3600,
    });
  }
}

/** One upload_urls entry: a signed, single-file URL that needs no API key (docs/transfers.md). */
export function uploadUrlFor(services: Services, transfer: TransferRow, file: FileRow) {
  return uploadUrlEntry(
    services,
    { kind: transferUploads.kind, owner: transfer.id, file: file.id },
    file,
    transfer.upload_deadline,
  );
}

function checkLimits(limits: TransferLimits, mode: EncryptionMode, input: CreateTransferInput, maxParts: number) {
  if (input.files.length > limits.maxFiles) {
    throw new DomainError('validation_error', `At most ${limits.maxFiles} files per transfer.`, { param: 'files' });
  }
  for (const [index, file] of input.files.entries()) {
    if (file.size > limits.maxFileBytes) {
      throw new DomainError('validation_error', `Each file may hold at most ${limits.maxFileBytes} bytes.`, {
        param: `files.${index}.size`,
      });
    }
    checkPlannable(file.size, mode, maxParts, `files.${index}.size`);
    if (mode === 'e2e' && file.size < MIN_E2E_BLOB) {
      throw new DomainError('validation_error', `An end-to-end encrypted file is at least ${MIN_E2E_BLOB} bytes.`, {
        param: `files.${index}.size`,
      });
    }
  }
  if (input.expires_in_hours !== undefined && input.expires_in_hours > limits.maxExpiryHours) {
    throw new DomainError('validation_error', `expires_in_hours may be at most ${limits.maxExpiryHours}.`, {
      param: 'expires_in_hours',
    });
  }
  if (limits.maxDownloads !== null && input.max_downloads !== undefined && input.max_downloads > limits.maxDownloads) {
    throw new DomainError('validation_error', `max_downloads may be at most ${limits.maxDownloads} here.`, {
      param: 'max_downloads',
    });
  }
}
