import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

export const folderRow = z.object({
  id: z.uuid(),
  name: z.string(),
  created_at: z.date(),
  transfer_count: z.coerce.number().int(),
});
export type FolderRow = z.infer<typeof folderRow>;

const columns = sql.fragment`
  f.id, f.name, f.created_at,
  (SELECT count(*) FROM transfers t WHERE t.folder_id = f.id) AS transfer_count`;

export function createFolderQueries(db: CommonQueryMethods) {
  return {
    async insert(tenant: Tenant, name: string): Promise<FolderRow> {
      const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        INSERT INTO folders (workspace_id, environment, name)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${name}) RETURNING id`);
      return db.one(sql.type(folderRow)`SELECT ${columns} FROM folders f WHERE f.id = ${id}`);
    },

    async find(tenant: Tenant, id: string): Promise<FolderRow | null> {
      return db.maybeOne(sql.type(folderRow)`
        SELECT ${columns} FROM folders f
        WHERE f.id = ${id} AND f.workspace_id = ${tenant.workspaceId} AND f.environment = ${tenant.environment}`);
    },

    async list(tenant: Tenant, window: PageWindow): Promise<readonly FolderRow[]> {
      return db.any(sql.type(folderRow)`
        SELECT ${columns} FROM folders f
        WHERE f.workspace_id = ${tenant.workspaceId} AND f.environment = ${tenant.environment}
          AND ${olderThanCursor(window, 'f')}
        ORDER BY f.created_at DESC, f.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },
  };
}
