import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import {
  createIntakeQueries,
  type IntakeDocumentRow,
  type IntakeFileRow,
  type IntakeRow,
} from '../db/queries/intakes.ts';
import { DomainError } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import { countSandboxDownloads, downloadLimitReached } from '../sandbox.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { openForDownload } from '../uploads/content.ts';
import { type DownloadLink, presentDocument } from './present.ts';
import type { IntakeDocumentStatus } from './vocabulary.ts';

// An intake's documents, as their owner reads and deletes them, and the
// short-lived links their files download from (docs/intakes.md, "Intake document").

/** Spec: a document's download_url is valid 300 seconds. */
export const DOWNLOAD_URL_SECONDS = 300;

export async function getDocument(services: Services, caller: Caller, intakeId: string, documentId: string) {
  const { intake, document } = await findDocument(services, caller, intakeId, documentId);
  if (document.status === 'deleted') throw documentGone(document);
  const files = await createIntakeQueries(services.db).files([document.id]);
  return presentDocument(intake, document, files, downloadLinks(services, intake, document, files));
}

export type ListDocumentsInput = PageQuery & { status?: IntakeDocumentStatus | undefined };

export async function listDocuments(services: Services, caller: Caller, intakeId: string, input: ListDocumentsInput) {
  const intake = await ownIntake(services, caller, intakeId);
  const filters = { intake: intakeId, status: input.status ?? null };
  const window = services.paginator.open('intake_documents', filters, input);
  const queries = createIntakeQueries(services.db);
  const rows = await queries.listDocuments(tenantOf(caller), intakeId, { status: input.status }, window);
  const files = Map.groupBy(await queries.files(rows.map((row) => row.id)), (file) => file.document_id);
  return services.paginator.close('intake_documents', filters, input, rows, (row) => {
    const own = files.get(row.id) ?? [];
    return presentDocument(intake, row, own, downloadLinks(services, intake, row, own));
  });
}

/** Deletes a document now, as retention would: keys first, then its workflow removes the blobs. */
export async function deleteDocument(services: Services, caller: Caller, intakeId: string, documentId: string) {
  const { document } = await findDocument(services, caller, intakeId, documentId);
  if (document.status === 'deleted') throw documentGone(document);
  await createIntakeQueries(services.db).destroyDocument(document.id);
  await services.workflows.intakes.documentDeleted(document.id).catch(() => undefined);
  return { id: document.id, object: 'intake_document' as const, deleted: true as const };
}

async function ownIntake(services: Services, caller: Caller, intakeId: string): Promise<IntakeRow> {
  const queries = createIntakeQueries(services.db);
  const intake = await queries.find(tenantOf(caller), intakeId);
  if (intake) return intake;
  // Spec: a sandbox key asking for a live intake is refused (403), not told it is absent.
  if (caller.environment === 'sandbox') {
    const live = await queries.find({ workspaceId: caller.workspaceId, environment: 'live' }, intakeId);
    if (live) throw new DomainError('forbidden', 'A sandbox key cannot read live intakes.');
  }
  throw new DomainError('not_found', 'No such intake.');
}

async function findDocument(services: Services, caller: Caller, intakeId: string, documentId: string) {
  const intake = await ownIntake(services, caller, intakeId);
  const document = await createIntakeQueries(services.db).findDocument(tenantOf(caller), intakeId, documentId);
  if (!document) throw new DomainError('not_found', 'No such document in this intake.');
  return { intake, document };
}

function documentGone(document: IntakeDocumentRow) {
  return new DomainError('not_found', 'This document was deleted: its retention ended or its owner deleted it.', {
    kind: 'gone',
    details: { deleted_at: document.deleted_at?.toISOString() ?? null },
  });
}

/** Whether the owner may fetch a document's files: all stored, and in server mode scanned clean. */
function downloadable(intake: IntakeRow, document: IntakeDocumentRow): boolean {
  return intake.encryption_mode === 'e2e_asym' ? document.status === 'received' : document.status === 'available';
}

function downloadLinks(
  services: Services,
  intake: IntakeRow,
  document: IntakeDocumentRow,
  files: readonly IntakeFileRow[],
): Map<string, DownloadLink> {
  const links = new Map<string, DownloadLink>();
  if (!downloadable(intake, document)) return links;
  const expiresAt = new Date(Date.now() + DOWNLOAD_URL_SECONDS * 1000);
  for (const file of files) {
    // `n` makes each call's URL new (the spec's "fresh URLs"), even within the second.
    const token = signToken(
      services.keys.links,
      'intake-download',
      { d: document.id, f: file.id, n: randomUUID() },
      expiresAt,
    );
    links.set(file.id, {
      url: `${services.config.api.publicBaseUrl}/v1/intake-downloads/${token}`,
      expiresIn: DOWNLOAD_URL_SECONDS,
    });
  }
  return links;
}

/** A download link's file, while the link is fresh and its document still there. */
export async function resolveIntakeDownload(services: Services, token: string) {
  const check = verifyToken(services.keys.links, 'intake-download', token);
  if (!check.ok) {
    // Spec: an expired URL gives 403 at the download host.
    throw check.reason === 'expired'
      ? new DomainError('forbidden', 'This download URL has expired: fetch the document again for a fresh one.')
      : new DomainError('not_found', 'No such download URL.');
  }
  const queries = createIntakeQueries(services.db);
  const [document, file] = await Promise.all([
    queries.documentById(check.data.d ?? ''),
    queries.file(check.data.f ?? ''),
  ]);
  if (!document || !file || file.document_id !== document.id)
    throw new DomainError('not_found', 'No such download URL.');
  if (document.status === 'deleted') throw documentGone(document);
  const intake = await queries.findById(document.intake_id);
  if (!intake || !downloadable(intake, document)) throw new DomainError('not_found', 'No such download URL.');
  // Each request counts against the sandbox's 5 downloads of a file, a resumed one included.
  const counted = await countSandboxDownloads(services.db, intake.environment, 'intake_file', [file.id]);
  if (!counted.has(file.id)) throw downloadLimitReached('This file');
  return { intake, document, file };
}

/**
 * What a download link sends: the stored VAL1 blob as it is for end-to-end documents (the owner
 * decrypts), the decrypted file for server-mode ones. `range` is inclusive, of what is sent.
 */
export async function openIntakeDownload(
  services: Services,
  target: Awaited<ReturnType<typeof resolveIntakeDownload>>,
  range?: { start: number; end: number },
): Promise<Readable> {
  const mode = target.intake.encryption_mode === 'e2e_asym' ? 'e2e' : 'server';
  return openForDownload({ ...services, objects: services.downloads.objects }, target.file, mode, range);
}
