import { createSqlTag } from 'slonik';
import { z } from 'zod';

// The project's SQL tag: slonik's, plus the aliases our queries share.
// `void` types statements that return no rows (INSERT/UPDATE without RETURNING).
export const sql = createSqlTag({
  typeAliases: {
    void: z.object({}).strict(),
  },
});
