import { createFolderQueries, type FolderRow } from '../db/queries/folders.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';

export function presentFolder(row: FolderRow) {
  return {
    id: row.id,
    object: 'folder' as const,
    name: row.name,
    transfer_count: row.transfer_count,
    created_at: row.created_at,
  };
}

export async function createFolder(services: Services, caller: Caller, name: string) {
  return presentFolder(await createFolderQueries(services.db).insert(tenantOf(caller), name));
}

export async function listFolders(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('folders', {}, page);
  const rows = await createFolderQueries(services.db).list(tenantOf(caller), window);
  return services.paginator.close('folders', {}, page, rows, presentFolder);
}
