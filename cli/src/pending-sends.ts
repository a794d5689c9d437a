import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SendSession } from '../../sdk/src/index.ts';
import { configDir } from './config.ts';
import { CliError } from './exit-codes.ts';

// An interrupted send survives the process: before the first byte leaves,
// `valise send` writes the session (upload URLs, and in e2e mode the link key)
// and the files' paths under the config directory, mode 0600. `valise resume`
// reads it back; a completed send deletes it.

export type PendingSend = {
  version: 1;
  created_at: string;
  /** Absolute paths, in the session's file order. */
  paths: string[];
  session: SendSession;
};

function directory(): string {
  return join(configDir(), 'pending-sends');
}

function fileFor(transferId: string): string {
  if (!/^[0-9a-f-]{36}$/i.test(transferId)) throw new CliError(`Not a transfer id: ${transferId}`);
  return join(directory(), `${transferId}.json`);
}

export async function savePending(pending: PendingSend): Promise<void> {
  await mkdir(directory(), { recursive: true, mode: 0o700 });
  await writeFile(fileFor(pending.session.transfer.id), JSON.stringify(pending), { mode: 0o600 });
}

export async function removePending(transferId: string): Promise<void> {
  await rm(fileFor(transferId), { force: true });
}

/** The pending send of that transfer, or the most recent one when no id is given. */
export async function loadPending(transferId?: string): Promise<PendingSend> {
  const path = transferId ? fileFor(transferId) : await newest();
  if (!path) throw new CliError('There is no interrupted send to resume.');
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PendingSend;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CliError(`No interrupted send of transfer ${transferId} on this machine.`);
    }
    throw error;
  }
}

export async function listPending(): Promise<PendingSend[]> {
  const names = await readdir(directory()).catch(() => [] as string[]);
  const all = await Promise.all(
    names
      .filter((name) => name.endsWith('.json'))
      .map(async (name) => JSON.parse(await readFile(join(directory(), name), 'utf8')) as PendingSend),
  );
  return all.sort((a, b) => b.created_at.localeCompare(a.created_at));
}

async function newest(): Promise<string | undefined> {
  const names = (await readdir(directory()).catch(() => [] as string[])).filter((name) => name.endsWith('.json'));
  const dated = await Promise.all(
    names.map(async (name) => ({
      path: join(directory(), name),
      mtime: (await stat(join(directory(), name))).mtimeMs,
    })),
  );
  return dated.sort((a, b) => b.mtime - a.mtime)[0]?.path;
}
