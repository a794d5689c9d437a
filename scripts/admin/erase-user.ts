import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { createDatabasePool } from '../../lib/db/pool.ts';
import { DomainError } from '../../lib/errors.ts';
import { eraseUser } from '../../lib/gdpr/erasure.ts';

export const ERASE_USER_USAGE = 'npm run -s admin -- erase-user --workspace WORKSPACE_ID --user USER_ID';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Erases a user's personal data in every family (docs/gdpr.md, "Erasure"); prints what changed as JSON. */
export async function eraseUserCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { workspace: { type: 'string' }, user: { type: 'string' } } });
  if (!UUID.test(values.workspace ?? '') || !UUID.test(values.user ?? '')) {
    process.stderr.write(`--workspace and --user are required, as uuids\nusage: ${ERASE_USER_USAGE}\n`);
    return 1;
  }
  const db = await createDatabasePool(loadConfig().database.url, 2);
  try {
    const result = await eraseUser(db, values.workspace ?? '', values.user ?? '');
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  } finally {
    await db.end();
  }
}
