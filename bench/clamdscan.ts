import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// ClamAV's own INSTREAM client, `clamdscan --stream`, as the ceiling of a scan: what clamd takes
// for a file when the bytes come straight from disk through the client its makers wrote.
//
// clamdscan sends at most the StreamMaxLength of ITS config (not clamd's) and then ends the stream
// as if the file were over, and prints `OK` for that prefix: with no StreamMaxLength in its config
// it stops at 100 MiB (ClamAV's default), with Debian's /etc/clamav/clamd.conf at 25 MiB. A
// ceiling measured that way scans a fraction of the file (issue #26 compared 100 MiB scanned by
// clamdscan with 300 MiB by Valise). So the config here is written for the file: StreamMaxLength
// is its exact size, so all of it is sent, and the end of the stream is the end of the file.

export type ClamdscanRun = { seconds: number; output: string };

export async function clamdscanStream(path: string, clamd: { host: string; port: number }): Promise<ClamdscanRun> {
  const { size } = await stat(path);
  const dir = await mkdtemp(join(tmpdir(), 'valise-clamdscan-'));
  try {
    const config = join(dir, 'clamd.conf');
    // clamdscan reads only the connection and the stream limit from this file.
    await writeFile(config, `TCPSocket ${clamd.port}\nTCPAddr ${clamd.host}\nStreamMaxLength ${size}\n`);
    const started = performance.now();
    const { stdout } = await promisify(execFile)('clamdscan', [
      '--stream',
      '--no-summary',
      `--config-file=${config}`,
      path,
    ]).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      // Exit status 1 is "virus found", 2 an error: either way not a ceiling.
      throw new Error(`clamdscan --stream ${path}: ${(error.stdout ?? '') + (error.stderr ?? '') || error.message}`);
    });
    const seconds = (performance.now() - started) / 1000;
    const output = stdout.trim();
    if (!output.endsWith(': OK')) throw new Error(`clamdscan --stream ${path} answered ${output}`);
    return { seconds, output };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
