// The recipients family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/** How an address-book entry came to be: created through the API, or from a transfer's recipients. */
export const RECIPIENT_SOURCES = ['api', 'transfer'] as const;
export type RecipientSource = (typeof RECIPIENT_SOURCES)[number];
