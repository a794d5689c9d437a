import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import test from 'ava';
import { zipStream } from '../lib/zip/stream.ts';
import { crc32 as jsCrc32, planZip, safeName, zipChunks } from '../sdk/src/zip.ts';
import { runCommand } from './helpers/command.ts';

// The ZIP writer against independent readers: Info-ZIP's `unzip -t` and Python's zipfile.
// No stack: these run on bytes alone.

const dir = mkdtempSync(join(tmpdir(), 'valise-zip-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

type File = { name: string; bytes: Buffer };

async function archive(files: File[]): Promise<Buffer> {
  const { plan, stream } = zipStream(
    files.map((f) => ({ name: f.name, size: f.bytes.length })),
    async (index) => Readable.from([files[index]?.bytes ?? Buffer.alloc(0)]),
  );
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  if (bytes.length !== plan.size) throw new Error(`planned ${plan.size}, wrote ${bytes.length}`);
  return bytes;
}

/** What Python's zipfile reads back: names, sizes, offsets, and the content of the small entries. */
const PY_READ = `
import json, sys, zipfile, hashlib
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip() if sys.argv[2] == 'test' else None
out = []
for i in z.infolist():
    item = {'name': i.filename, 'size': i.file_size, 'offset': i.header_offset, 'flags': i.flag_bits}
    if i.file_size < 1 << 20: item['hex'] = z.read(i).hex()
    out.append(item)
print(json.dumps({'bad': bad, 'entries': out}))
`;

async function python(path: string, testAll = true) {
  const run = await runCommand('python3', ['-c', PY_READ, path, testAll ? 'test' : 'list']);
  if (run.code !== 0) throw new Error(run.output);
  return JSON.parse(run.stdout) as {
    bad: string | null;
    entries: { name: string; size: number; offset: number; flags: number; hex?: string }[];
  };
}

async function unzipTest(path: string) {
  const run = await runCommand('unzip', ['-t', path]);
  return { ok: run.code === 0 && /No errors detected/.test(run.stdout), output: run.output };
}

test('small files, an empty one and UTF-8 names: unzip -t and Python read them back byte for byte', async (t) => {
  const files: File[] = [
    { name: 'hello.txt', bytes: Buffer.from('hello from Valise\n') },
    { name: 'empty.bin', bytes: Buffer.alloc(0) },
    { name: 'Déjà vu — 写真 📷.jpg', bytes: randomBytes(200_000) },
    { name: 'reports/q3.pdf', bytes: randomBytes(70_000) },
  ];
  const path = join(dir, 'small.zip');
  writeFileSync(path, await archive(files));
  const unzip = await unzipTest(path);
  t.true(unzip.ok, unzip.output);
  const read = await python(path);
  t.is(read.bad, null);
  t.deepEqual(
    read.entries.map((e) => [e.name, e.hex]),
    files.map((f) => [f.name, f.bytes.toString('hex')]),
  );
  t.true(
    read.entries.every((e) => (e.flags & 0x0808) === 0x0808),
    'data descriptors and UTF-8 names',
  );
});

test('no entry at all is still a valid archive', async (t) => {
  const path = join(dir, 'none.zip');
  writeFileSync(path, await archive([]));
  t.deepEqual((await python(path)).entries, []);
});

test('names are made safe and repeated names numbered', (t) => {
  t.is(safeName('../../etc/passwd'), 'etc/passwd');
  t.is(safeName('/abs/./x.txt'), 'abs/x.txt');
  t.is(safeName('C:\\Windows\\x.txt'), 'C_/Windows/x.txt');
  t.is(safeName('a\u0000b\nc'), 'a_b_c');
  t.is(safeName('invoice\u202Efdp.exe'), 'invoice_fdp.exe');
  t.is(safeName('c1\u0085 mark\u200f iso\u2066'), 'c1_ mark_ iso_');
  t.is(safeName('..'), 'file');
  const plan = planZip(
    ['a.txt', 'A.txt', 'a.txt', 'dir/a.txt', 'noext', 'noext', '.hidden', '.hidden'].map((name) => ({ name, size: 0 })),
  );
  t.deepEqual(
    plan.entries.map((e) => e.name),
    ['a.txt', 'A (2).txt', 'a (3).txt', 'dir/a.txt', 'noext', 'noext (2)', '.hidden', '.hidden (2)'],
  );
});

test('10,000 files of one name are numbered in linear time, a name already numbered by its sender skipped', (t) => {
  // A collection's archive holds up to 100 transfers of up to 100 files: one title and one file
  // name repeated make 10,000 entries of one name. Numbering them from 2 each time cost n² lookups
  // (17 s of a blocked event loop on the dev machine).
  const inputs = [
    { name: 'same/a (3).txt', size: 0 },
    ...Array.from({ length: 10_000 }, () => ({ name: 'same/a.txt', size: 0 })),
  ];
  const started = performance.now();
  const plan = planZip(inputs);
  const ms = performance.now() - started;
  t.true(ms < 2_000, `planned in ${Math.round(ms)} ms`);
  const names = plan.entries.map((e) => e.name);
  t.is(new Set(names.map((name) => name.toLowerCase())).size, names.length, 'every name unique');
  t.deepEqual(names.slice(0, 5), [
    'same/a (3).txt',
    'same/a.txt',
    'same/a (2).txt',
    'same/a (4).txt',
    'same/a (5).txt',
  ]);
  t.is(names.at(-1), 'same/a (10001).txt');
});

test('an entry that supplies fewer bytes than planned fails the archive', async (t) => {
  const { stream } = zipStream([{ name: 'x', size: 10 }], async () => Readable.from([Buffer.alloc(5)]));
  await t.throwsAsync(
    async () => {
      for await (const _ of stream);
    },
    { message: /ended after 5 of 10 bytes/ },
  );
});

test('the JavaScript CRC-32 (browsers) agrees with zlib', async (t) => {
  const { crc32 } = await import('node:zlib');
  const data = randomBytes(100_003);
  t.is(jsCrc32(data, 0), crc32(data));
  t.is(jsCrc32(data.subarray(50_000), jsCrc32(data.subarray(0, 50_000), 0)), crc32(data));
});

test('past 4 GiB: ZIP64 sizes and offsets that unzip -t and Python accept (a sparse file, no 4 GiB written)', async (t) => {
  // A first small file, then 4 GiB + 1 MiB of zeros (its size needs ZIP64), then a file whose
  // offset needs ZIP64. The zeros are never written: the file is sparse where they go.
  const big = 2 ** 32 + 2 ** 20;
  const zero = Buffer.alloc(4 * 2 ** 20);
  const first = randomBytes(1000);
  const last = randomBytes(3000);
  const inputs = [
    { name: 'first.bin', size: first.length },
    { name: 'zeros.bin', size: big },
    { name: 'last.bin', size: last.length },
  ];
  const plan = planZip(inputs);
  t.true(plan.zip64End);
  async function* zeros() {
    for (let left = big; left > 0; left -= zero.length) yield left >= zero.length ? zero : zero.subarray(0, left);
  }
  const path = join(dir, 'zip64.zip');
  const fd = openSync(path, 'w');
  let position = 0;
  try {
    const sources = [[first], zeros(), [last]];
    for await (const chunk of zipChunks(plan, (_e, i) => sources[i] as AsyncIterable<Uint8Array>)) {
      if (chunk.buffer !== zero.buffer) writeSync(fd, chunk, 0, chunk.length, position);
      position += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  t.is(position, plan.size);
  const read = await python(path, false);
  t.deepEqual(
    read.entries.map((e) => [e.name, e.size]),
    inputs.map((i) => [i.name, i.size]),
  );
  t.true((read.entries[2]?.offset ?? 0) > 2 ** 32, 'the last local header is past 4 GiB');
  t.is(read.entries[2]?.hex, last.toString('hex'));
  const unzip = await unzipTest(path);
  t.true(unzip.ok, unzip.output);
});
