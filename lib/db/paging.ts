import type { PageWindow } from '../pagination.ts';
import { sql } from './sql.ts';

/** The keyset condition of a page: rows older than the cursor's position, or all rows on the first page. */
export function olderThanCursor(window: PageWindow, alias: string) {
  if (!window.after) return sql.fragment`TRUE`;
  const createdAt = sql.identifier([alias, 'created_at']);
  const id = sql.identifier([alias, 'id']);
  return sql.fragment`(${createdAt}, ${id}) < (${sql.timestamp(window.after.createdAt)}, ${window.after.id})`;
}
