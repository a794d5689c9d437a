import type { Family } from '../family.ts';
import { LEGAL_LANGUAGES } from './vocabulary.ts';

export const legalFamily = {
  name: 'legal',
  openapi: {
    tag: 'legal',
    description: "Valise's published legal documents (in French), and a user's acceptance of their current version.",
  },
  // Acceptances are audit entries (`legal.accepted`), read back by GET /v1/gdpr/acceptances.
  tables: {
    legal_documents: { scope: { kind: 'global' }, personal: [], vocabulary: { language: LEGAL_LANGUAGES } },
  },
} satisfies Family;
