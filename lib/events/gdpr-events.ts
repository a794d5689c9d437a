import { z } from 'zod';
import { GDPR_EXPORT_STATUSES } from '../gdpr/vocabulary.ts';
import { EMITTED, event } from './define.ts';

// workspace.*: what Valise records about the workspace's legal acceptances and GDPR exports.

const GdprExportView = z
  .object({
    id: z.uuid().describe('The export id.'),
    status: z.enum(GDPR_EXPORT_STATUSES).describe('Its status when the event was recorded.'),
    user_id: z.uuid().nullable().describe('The user it is about; null for the whole workspace (its environment).'),
    requested_by: z.uuid().describe('The user whose key asked for it.'),
  })
  .meta({ title: 'GdprExportEventView', description: 'A GDPR export (docs/gdpr.md), without its content or link.' });

export const GDPR_EVENTS = {
  'workspace.legal_accepted': event(
    "A user accepted the current version of a legal document (`POST /v1/legal/acceptances`), with their key's environment.",
    {
      user_id: z.uuid().describe('The user who accepted.'),
      slug: z.string().describe('The document, such as `conditions-utilisation`.'),
      version: z.string().describe('The version accepted: the current one then.'),
    },
    EMITTED,
  ),
  'workspace.export_requested': event(
    'A GDPR export was requested (`POST /v1/gdpr/exports`); its collection starts.',
    { export: GdprExportView },
    EMITTED,
  ),
  'workspace.export_completed': event(
    'A GDPR export is ready: `GET /v1/gdpr/exports/{id}` gives a download link valid 300 seconds.',
    { export: GdprExportView, size: z.int().min(0).describe('The size of the export, in bytes of JSON.') },
    EMITTED,
  ),
};
