import { runCommand } from './command.ts';

// Reading an archive the way its users' tools do: Info-ZIP's `unzip -t` tests every entry's CRC,
// Python's zipfile reads the central directory and every entry.

const PY_LIST = `
import hashlib, json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps({'bad': z.testzip(), 'entries': {i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist()}}))
`;

export type ZipCheck = {
  /** `unzip -t` found no error. */
  unzipOk: boolean;
  unzipOutput: string;
  /** The first entry zipfile found damaged, or null. */
  bad: string | null;
  /** Each entry's name and the SHA-256 (hex) of its content. */
  entries: Record<string, string>;
};

export async function checkZip(path: string): Promise<ZipCheck> {
  const unzip = await runCommand('unzip', ['-t', path]);
  const python = await runCommand('python3', ['-c', PY_LIST, path]);
  if (python.code !== 0) throw new Error(`zipfile could not read ${path}: ${python.output}`);
  const read = JSON.parse(python.stdout) as { bad: string | null; entries: Record<string, string> };
  return {
    unzipOk: unzip.code === 0 && /No errors detected/.test(unzip.stdout),
    unzipOutput: unzip.output,
    ...read,
  };
}
