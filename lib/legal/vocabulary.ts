// The legal family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/** The languages legal documents are published in (the spec: "published legal documents in French"). */
export const LEGAL_LANGUAGES = ['fr'] as const;
export type LegalLanguage = (typeof LEGAL_LANGUAGES)[number];
