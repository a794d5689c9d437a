import type { Family } from '../family.ts';

export const collectionsFamily = {
  name: 'collections',
  openapi: {
    tag: 'collections',
    description: 'Collections: transfers grouped under a title and shared through one link, and its public view.',
  },
  tables: {
    collections: { scope: { kind: 'tenant' }, personal: [] },
    // A transfer's place in a collection dates from when it was added.
    collection_transfers: { scope: { kind: 'tenant' }, personal: [], age: 'added_at' },
  },
} satisfies Family;
