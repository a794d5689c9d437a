import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

// Migrations are plain SQL files named NNNN_name.sql, applied in order, each
// in its own transaction, recorded with a checksum so an edited migration is
// caught instead of silently diverging. Multi-statement files need the simple
// query protocol, hence pg directly rather than slonik.

const MIGRATIONS_LOCK = 7_210_001;

export type MigrationResult = { applied: string[]; alreadyApplied: number };

export async function migrate(databaseUrl: string, directory: string): Promise<MigrationResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATIONS_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Map<string, string>(
      (
        await client.query<{ version: string; checksum: string }>('SELECT version, checksum FROM schema_migrations')
      ).rows.map((r) => [r.version, r.checksum]),
    );
    const files = (await readdir(directory)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
    const applied: string[] = [];
    for (const file of files) {
      const text = await readFile(join(directory, file), 'utf8');
      const checksum = createHash('sha256').update(text).digest('hex');
      const known = done.get(file);
      if (known !== undefined) {
        if (known !== checksum) throw new Error(`Migration ${file} was edited after being applied`);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(text);
        await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [file, checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${file} failed: ${(error as Error).message}`);
      }
      applied.push(file);
    }
    return { applied, alreadyApplied: done.size };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATIONS_LOCK]).catch(() => {});
    await client.end();
  }
}
