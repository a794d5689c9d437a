import type { DeclaredTable } from '../db/queries/personal-data.ts';
import { FAMILIES } from '../families.ts';

/** Every table of every family (lib/families.ts), in the families' order: what export and erasure walk. */
export const DECLARED_TABLES: readonly DeclaredTable[] = FAMILIES.flatMap((family) =>
  Object.entries(family.tables).map(([table, declaration]) => ({ family: family.name, table, declaration })),
);

/** Families with at least one table an export reads: personal or exported columns. */
export const EXPORTED_FAMILIES: readonly string[] = FAMILIES.filter((family) =>
  Object.values(family.tables).some((table) => table.personal.length > 0 || (table.exported?.length ?? 0) > 0),
).map((family) => family.name);
