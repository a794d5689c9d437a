import type { Family } from '../family.ts';

export const foldersFamily = {
  name: 'folders',
  openapi: { tag: 'folders', description: 'Folders that organise transfers.' },
  tables: { folders: { scope: { kind: 'tenant' }, personal: [] } },
} satisfies Family;
