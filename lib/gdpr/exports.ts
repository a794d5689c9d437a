import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createGdprExportQueries, type GdprExportRow } from '../db/queries/gdpr-exports.ts';
import { sql } from '../db/sql.ts';
import { DomainError, notFound } from '../errors.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { openExport } from './collect.ts';
import { exportEventView, type GdprExport, presentExport } from './present.ts';

// GDPR exports (docs/gdpr.md): asked for by a key with `gdpr:export`, collected by the gdprExport
// workflow, fetched through a link valid 300 seconds (a signed token naming the export, checked
// before anything is read), in the caller's environment only.

/** Spec (Limits): presigned download URL validity. */
export const EXPORT_LINK_SECONDS = 300;

export type RequestExportInput = { user_id?: string };

function downloadLink(services: Services, row: GdprExportRow) {
  if (row.status !== 'completed' || !row.data_key_wrapped) return null;
  const expiresAt = new Date(Date.now() + EXPORT_LINK_SECONDS * 1000);
  // `n` makes each answer's link new, even within the second.
  const token = signToken(services.keys.links, 'gdpr-export', { x: row.id, n: randomUUID() }, expiresAt);
  return { url: `${services.config.api.publicBaseUrl}/v1/gdpr/export-downloads/${token}`, expiresAt };
}

const present = (services: Services, row: GdprExportRow) => presentExport(row, downloadLink(services, row));

export async function requestGdprExport(
  services: Services,
  caller: Caller,
  input: RequestExportInput,
): Promise<GdprExport> {
  const tenant = tenantOf(caller);
  return services.db.transaction(async (tx) => {
    if (input.user_id !== undefined) {
      const member = await tx.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
        SELECT id FROM users WHERE id = ${input.user_id} AND workspace_id = ${tenant.workspaceId}`);
      if (!member) throw new DomainError('not_found', 'No such user in this workspace.', { param: 'user_id' });
    }
    const row = await createGdprExportQueries(tx).insert(tenant, caller.userId, input.user_id ?? null);
    await createEventQueries(tx).record(tenant, 'workspace.export_requested', { export: exportEventView(row) });
    // Inside the transaction: a failure to schedule rolls the export back.
    await services.workflows.gdpr.start(tenant, row.id);
    return present(services, row);
  });
}

export async function getGdprExport(services: Services, caller: Caller, id: string): Promise<GdprExport> {
  const row = await createGdprExportQueries(services.db).find(tenantOf(caller), id);
  if (!row) throw notFound('GDPR export');
  return present(services, row);
}

/** The environment's latest export (`GET /v1/gdpr/export`). */
export async function latestGdprExport(services: Services, caller: Caller): Promise<GdprExport> {
  const row = await createGdprExportQueries(services.db).latest(tenantOf(caller));
  if (!row) throw new DomainError('not_found', 'No GDPR export yet: ask for one with POST /v1/gdpr/exports.');
  return present(services, row);
}

/** The export a download link names, opened, while the link is fresh and the export completed. */
export async function downloadGdprExport(services: Services, token: string): Promise<{ id: string; content: Buffer }> {
  const check = verifyToken(services.keys.links, 'gdpr-export', token);
  if (!check.ok) {
    // Spec: an expired URL gives 403 at the download host.
    throw check.reason === 'expired'
      ? new DomainError('forbidden', 'This download URL has expired: fetch the export again for a fresh one.')
      : new DomainError('not_found', 'No such download URL.');
  }
  const row = await createGdprExportQueries(services.db).byId(check.data.x ?? '');
  if (!row) throw new DomainError('not_found', 'No such download URL.');
  if (row.status !== 'completed' || !row.data_key_wrapped) {
    throw new DomainError('not_found', 'This export is no longer available.', { kind: 'gone' });
  }
  return { id: row.id, content: await openExport(services, row) };
}
