import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { Config } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { sql } from '../lib/db/sql.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { log } from './streaming.ts';

// The two workspaces of a bench at scale: the one it measures, and one of noise that every answer
// must leave out; deleted at the end, whatever their size.

export type BenchWorkspace = Awaited<ReturnType<typeof bootstrapWorkspace>>;

/** `label` names them (`Bench <label>`, `Bench <label> noise`); `run` makes their owners unique. */
export async function createBenchWorkspaces(db: DatabasePool, config: Config, label: string) {
  const run = randomBytes(4).toString('hex');
  const keys = { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') };
  const slug = label.toLowerCase().replace(/\s+/g, '-');
  const measured = await bootstrapWorkspace(db, keys, {
    workspaceName: `Bench ${label}`,
    ownerEmail: `bench-${slug}-${run}@example.com`,
  });
  const noise = await bootstrapWorkspace(db, keys, {
    workspaceName: `Bench ${label} noise`,
    ownerEmail: `bench-${slug}-noise-${run}@example.com`,
  });
  return { run, measured, noise };
}

export async function deleteBenchWorkspaces(db: DatabasePool, workspaces: readonly BenchWorkspace[]): Promise<void> {
  log('deleting the bench workspaces…');
  for (const workspace of workspaces) {
    // Millions of rows cascade: past the pool's statement timeout.
    await db
      .transaction(async (tx) => {
        await tx.query(sql.typeAlias('void')`SET LOCAL statement_timeout = 0`);
        await tx.query(sql.typeAlias('void')`DELETE FROM workspaces WHERE id = ${workspace.workspace_id}`);
      })
      .catch((error: unknown) => log(`could not delete workspace ${workspace.workspace_id}: ${String(error)}`));
  }
}
