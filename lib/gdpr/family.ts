import { createGdprExportQueries, gdprExportKeyAad } from '../db/queries/gdpr-exports.ts';
import type { Family } from '../family.ts';
import { purgeGdprExports } from './retention.ts';
import { GDPR_EXPORT_STATUSES } from './vocabulary.ts';

export const gdprFamily = {
  name: 'gdpr',
  openapi: {
    tag: 'gdpr',
    description: 'GDPR: exports of what Valise holds about a workspace or a user, and legal acceptances.',
  },
  tables: {
    gdpr_exports: {
      scope: { kind: 'tenant' },
      personal: [],
      subjects: { userIds: ['subject_user_id'] },
      vocabulary: { status: GDPR_EXPORT_STATUSES },
      keyWrapped: { data_key_wrapped: { aad: gdprExportKeyAad } },
      // An export about an erased user holds their data: it ends now, and its data key goes with
      // it, so the sealed object is noise until the workflow deletes it at the end of its retention.
      erase: (connection, subject) =>
        createGdprExportQueries(connection).shredAbout(subject.workspaceId, subject.userId),
    },
  },
  retention: { purge: purgeGdprExports },
} satisfies Family;

// The purposes of the family's capability tokens (lib/crypto/signed-token.ts).
declare module '../crypto/signed-token.ts' {
  interface TokenPurposes {
    'gdpr-export': "a GDPR export's download link (lib/gdpr/exports.ts)";
  }
}
