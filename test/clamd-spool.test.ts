import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import test from 'ava';
import { loadConfig } from '../lib/config.ts';
import { createScanner } from '../lib/scan/clamd.ts';

// clamd spools every INSTREAM upload into its TemporaryDirectory before it
// scans it: the plaintext of every server-mode file. The stack's clamd (the
// one the app talks to, CLAMD_PORT) must keep that folder on a RAM filesystem
// (scripts/stack.sh, launch_clamd), and leave nothing there after a scan.

const run = promisify(execFile);
const { clamd } = loadConfig();

/** The TemporaryDirectory of the clamd listening on the app's port, from its config file. */
async function spoolOfRunningClamd(): Promise<string> {
  const { stdout } = await run('ss', ['-Hltnp', `sport = :${clamd.port}`]);
  const pid = /"clamd",pid=(\d+)/.exec(stdout)?.[1];
  if (!pid) throw new Error(`no clamd process found listening on port ${clamd.port}: ${stdout}`);
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  const configFile = args.find((arg) => arg.startsWith('--config-file='))?.slice('--config-file='.length);
  if (!configFile) throw new Error(`clamd ${pid} runs without --config-file: ${args.join(' ')}`);
  const dir = /^TemporaryDirectory\s+(\S+)\s*$/m.exec(await readFile(configFile, 'utf8'))?.[1];
  if (!dir) throw new Error(`${configFile} sets no TemporaryDirectory (clamd would spool to /tmp)`);
  return dir;
}

/** Files under `dir` (clamd makes a folder per scan) that begin with `prefix`. */
async function filesStartingWith(dir: string, prefix: Buffer): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const head = Buffer.alloc(prefix.length);
    try {
      const file = await open(path);
      await file.read(head, 0, prefix.length, 0).finally(() => file.close());
    } catch {
      continue; // another scan's file, gone in between
    }
    if (head.equals(prefix)) found.push(path);
  }
  return found;
}

test("clamd's spool is on a RAM filesystem: a file being scanned is there, and gone once scanned", async (t) => {
  const spool = await spoolOfRunningClamd();
  const { stdout: type } = await run('stat', ['-f', '-c', '%T', spool]);
  t.true(['tmpfs', 'ramfs'].includes(type.trim()), `clamd spools plaintext to ${spool}, a ${type.trim()} filesystem`);

  // Half a scan: clamd has what was sent so far, and waits for the rest.
  const scanner = createScanner({ ...clamd, timeoutMs: 30_000 });
  const content = randomBytes(256 * 1024);
  const stream = new PassThrough();
  const result = scanner.scan(stream);
  stream.write(content);
  let spooled: string[] = [];
  for (let i = 0; i < 100 && spooled.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    spooled = await filesStartingWith(spool, content.subarray(0, 4096));
  }
  t.is(spooled.length, 1, `the stream being scanned is spooled under ${spool}`);
  stream.end(randomBytes(64 * 1024));
  t.deepEqual(await result, { status: 'clean' });
  // clamd may answer before it has removed the spooled file (a fresh-clone run saw it there once):
  // it must be gone within moments, not at once.
  let left = spooled;
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await filesStartingWith(spool, content.subarray(0, 4096));
  }
  t.deepEqual(left, [], 'nothing of the scan is left behind');
});
