import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createScanner, type Scanner } from '../../lib/scan/clamd.ts';
import { freePort } from './ports.ts';

// A clamd of a test's own, with a 1 MiB StreamMaxLength (the shared one allows
// 2 GiB, too much to send in a test), loading the project's signatures.

export type PrivateClamd = { port: number; scanner: Scanner; stop: () => Promise<void> };

/** The clamd binary, or undefined when it is not installed. */
export function findClamd(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    try {
      accessSync(join(dir, 'clamd'), constants.X_OK);
      return join(dir, 'clamd');
    } catch {}
  }
  return undefined;
}

// Mirrors the clamd.conf that scripts/stack.sh writes, with a 1 MiB stream limit.
/** `port`: where it listens, a free one unless given (a fault test starts it again where it was). */
export async function startClamd(binary: string, port?: number): Promise<PrivateClamd> {
  const dir = await mkdtemp(join(tmpdir(), 'valise-clamd-'));
  // Its spool on a RAM filesystem too, when there is one (scripts/stack.sh, clamd_tmp).
  const spool = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : dir, 'valise-clamd-'));
  port ??= await freePort();
  const conf = join(dir, 'clamd.conf');
  await writeFile(
    conf,
    [
      'Foreground yes',
      `TCPSocket ${port}`,
      'TCPAddr 127.0.0.1',
      `DatabaseDirectory ${fileURLToPath(new URL('../../ops/clamav', import.meta.url))}`,
      `PidFile ${join(dir, 'clamd.pid')}`,
      `LogFile ${join(dir, 'clamd.log')}`,
      `TemporaryDirectory ${spool}`,
      'StreamMaxLength 1M',
      'MaxFileSize 2M',
      'MaxScanSize 4M',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(binary, [`--config-file=${conf}`], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
    await rm(spool, { recursive: true, force: true });
  };
  const scanner = createScanner({ host: '127.0.0.1', port, timeoutMs: 10_000 });
  const deadline = Date.now() + 60_000;
  while (!(await scanner.ping())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = await readFile(join(dir, 'clamd.log'), 'utf8').catch(() => '');
      await stop();
      throw new Error(`private clamd did not start:\n${log.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { port, scanner, stop };
}
