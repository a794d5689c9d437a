import { z } from 'zod';
import type { IntakeDocumentRow, IntakeFileRow, IntakeRow } from '../db/queries/intakes.ts';
import {
  INTAKE_CLOSE_REASONS,
  INTAKE_DOCUMENT_STATUSES,
  INTAKE_SOURCES,
  INTAKE_STATUSES,
} from '../intakes/vocabulary.ts';
import { EMITTED, event } from './define.ts';

// request.*: what secure intakes record (docs/intakes.md, "Events"). The spec
// calls intakes "requests" in its event names: a request for files.

const RequestView = z
  .object({
    id: z.string().describe('The intake id (`in_…`).'),
    title: z.string().describe('The title submitters see.'),
    status: z.enum(INTAKE_STATUSES).describe('The intake status after the change.'),
    closed_reason: z.enum(INTAKE_CLOSE_REASONS).nullable().describe('Why a closed intake closed.'),
    encryption_mode: z.string().describe('`server` or `e2e_asym`.'),
    submissions_count: z.int().min(0).describe('Documents submitted so far.'),
    expires_at: z.iso.datetime().nullable().describe('When the intake stops accepting submissions.'),
  })
  .describe('The secure intake (file request).');

const SubmissionView = z
  .object({
    id: z.string().describe('The intake document id (`doc_…`).'),
    status: z.enum(INTAKE_DOCUMENT_STATUSES).describe('The document status after the change.'),
    client_reference: z.string().nullable().describe('Opaque reference given by the submitter, such as a case number.'),
    files_count: z.int().min(0).describe('Files in the submission.'),
    total_size_bytes: z.int().min(0).describe('Sum of the encrypted blob sizes.'),
    source: z.enum(INTAKE_SOURCES).describe('How it was submitted: the intake page (`widget`) or the API.'),
  })
  .describe('The submission (intake document). Never its metadata, keys or file names.');

export function requestView(intake: IntakeRow): z.input<typeof RequestView> {
  return {
    id: intake.id,
    title: intake.title,
    status: intake.status,
    closed_reason: intake.closed_reason,
    encryption_mode: intake.encryption_mode,
    submissions_count: intake.submissions_count,
    expires_at: intake.expires_at?.toISOString() ?? null,
  };
}

export function submissionView(
  document: IntakeDocumentRow,
  files: readonly Pick<IntakeFileRow, 'encrypted_size'>[],
): z.input<typeof SubmissionView> {
  return {
    id: document.id,
    status: document.status,
    client_reference: document.client_reference,
    files_count: files.length,
    total_size_bytes: files.reduce((sum, file) => sum + (file.encrypted_size ?? 0), 0),
    source: document.source,
  };
}

const request = RequestView;
const submission = SubmissionView;

export const INTAKE_EVENTS = {
  'request.created': event('A secure intake was created (`POST /v1/intakes`).', { request }, EMITTED),
  'request.submitted': event(
    'A submitter started a submission (`POST /v1/intakes/{id}/submissions`): its files are being uploaded.',
    { request, submission },
    EMITTED,
  ),
  'request.submission_received': event(
    'Every file of a submission is stored: the document is `received` and its retention has started.',
    { request, submission },
    EMITTED,
  ),
  'request.completed': event(
    'An intake closed: its owner closed it, or it reached `max_submissions` (see `request.closed_reason`).',
    { request },
    EMITTED,
  ),
  'request.expired': event(
    'An intake reached its `expires_at` and stopped accepting submissions.',
    { request },
    EMITTED,
  ),
  'request.deleted': event('An intake and all its documents were deleted.', { request }, EMITTED),
};
