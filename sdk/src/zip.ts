// A streaming ZIP writer with no dependency, for Node and browsers alike: the
// API streams server-mode archives with it (lib/zip/), the share page builds
// end-to-end ones with it from files it decrypts (web/share.js loads the built
// copy at /assets/sdk/zip.js). docs/transfers.md, "Download all as ZIP", gives
// the choices:
// - STORE, never deflate: stored files are mostly compressed already (media,
//   office documents, archives), deflating costs CPU for little, and without it
//   every entry's size, hence the archive's exact length, is known before the
//   first byte is sent (Content-Length, progress bars).
// - The CRC-32 is only known once an entry's bytes have gone by, so every entry
//   has a data descriptor (flag bit 3) carrying it after the data; the sizes,
//   known in advance, are in the local header too.
// - ZIP64 fields per entry when its size or offset passes 0xFFFFFFFF, and the
//   ZIP64 end records when the central directory needs them (or > 65535 entries).
// - Names are UTF-8 (flag bit 11), made safe: no absolute path, no `..`, no
//   control character; a repeated name becomes `name (2).ext`.

const U32 = 0xffff_ffff;
const U16 = 0xffff;
const FLAGS = 0x0808; // bit 3: data descriptor; bit 11: UTF-8 names
const VERSION_ZIP64 = 45;
const VERSION_PLAIN = 20;
const encoder = new TextEncoder();

/** What the caller archives: a name (`/` separates folders) and the exact byte count it will supply. */
export type ZipInput = { name: string; size: number; modified?: Date | undefined };

export type ZipEntry = {
  /** The name as written in the archive: safe and unique. */
  name: string;
  size: number;
  offset: number;
  nameBytes: Uint8Array;
  /** Sizes in the local header's ZIP64 extra field, hence a 24-byte data descriptor. */
  zip64Sizes: boolean;
  dosTime: number;
  dosDate: number;
};

export type ZipPlan = {
  entries: ZipEntry[];
  /** The archive's exact length in bytes. */
  size: number;
  centralOffset: number;
  centralSize: number;
  zip64End: boolean;
};

/** CRC-32 (ISO-HDLC) of `data` continuing from `crc`: Node's zlib.crc32 has this signature. */
export type Crc32 = (data: Uint8Array, crc: number) => number;

let table: Uint32Array | undefined;

/** A table-driven CRC-32 for where no native one exists (browsers). */
export const crc32: Crc32 = (data, crc) => {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  const t = table;
  let c = ~crc;
  for (let i = 0; i < data.length; i++) c = (t[(c ^ (data[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
};

/** A name safe to extract anywhere: relative, no `.`/`..` segment, no control or reserved character. */
export function safeName(name: string): string {
  const segments = name
    .normalize('NFC')
    .replace(/\\/g, '/')
    // Controls, and the invisible direction marks and overrides that make `invoice\u202Efdp.exe` read
    // as `invoiceexe.pdf`: the API refuses them in names (docs/conventions.md, "Names and titles"), but
    // names stored before that rule still reach archives. The set is the SDK's `safeFileName`'s.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069:*?"<>|]/g, '_')
    .split('/')
    .map((segment) => segment.trim())
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..');
  return segments.join('/') || 'file';
}

/** The names an archive has given out (lower case), and for each name asked, the next number to try. */
type TakenNames = { names: Set<string>; nextNumber: Map<string, number> };

/**
 * `name`, or `name (2).ext`, `name (3).ext`… the first not yet taken (compared case-insensitively).
 * Numbering resumes where the last request for the same name stopped: the numbers before it are all
 * taken already, and trying them again would make an archive of n files of one name cost n² lookups
 * (10,000 files named alike held the event loop for 17 s).
 */
function unique(name: string, taken: TakenNames): string {
  const asked = name.toLowerCase();
  let candidate = name;
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > slash + 1 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  let n = taken.nextNumber.get(asked) ?? 2;
  if (taken.names.has(asked)) {
    do candidate = `${stem} (${n++})${ext}`;
    while (taken.names.has(candidate.toLowerCase()));
    taken.nextNumber.set(asked, n);
  }
  taken.names.add(candidate.toLowerCase());
  return candidate;
}

function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const year = Math.min(Math.max(date.getUTCFullYear(), 1980), 2107);
  return {
    dosTime: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | (date.getUTCSeconds() >> 1),
    dosDate: ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

const localHeaderSize = (e: ZipEntry) => 30 + e.nameBytes.length + (e.zip64Sizes ? 20 : 0);
const descriptorSize = (e: ZipEntry) => (e.zip64Sizes ? 24 : 16);
/** Central ZIP64 extra: sizes when they overflow, then the offset when it does. */
const centralExtraSize = (e: ZipEntry) => {
  const fields = (e.size >= U32 ? 2 : 0) + (e.offset >= U32 ? 1 : 0);
  return fields === 0 ? 0 : 4 + 8 * fields;
};

/** Lays out an archive of `inputs`, in order: names made safe and unique, offsets and the total length. */
export function planZip(inputs: readonly ZipInput[], now = new Date()): ZipPlan {
  const taken: TakenNames = { names: new Set(), nextNumber: new Map() };
  const entries: ZipEntry[] = [];
  let offset = 0;
  for (const input of inputs) {
    if (!Number.isSafeInteger(input.size) || input.size < 0) throw new RangeError(`bad size for ${input.name}`);
    const name = unique(safeName(input.name), taken);
    const entry: ZipEntry = {
      name,
      size: input.size,
      offset,
      nameBytes: encoder.encode(name),
      zip64Sizes: input.size >= U32,
      ...dosDateTime(input.modified ?? now),
    };
    if (entry.nameBytes.length > U16) throw new RangeError('a file name is too long for ZIP');
    entries.push(entry);
    offset += localHeaderSize(entry) + entry.size + descriptorSize(entry);
  }
  const centralOffset = offset;
  const centralSize = entries.reduce((sum, e) => sum + 46 + e.nameBytes.length + centralExtraSize(e), 0);
  const zip64End =
    entries.length > U16 - 1 || centralOffset >= U32 || centralSize >= U32 || entries.some((e) => centralExtraSize(e));
  const size = centralOffset + centralSize + (zip64End ? 56 + 20 : 0) + 22;
  return { entries, size, centralOffset, centralSize, zip64End };
}

function writer(length: number) {
  const bytes = new Uint8Array(length);
  const view = new DataView(bytes.buffer);
  let at = 0;
  return {
    bytes,
    u16(value: number) {
      view.setUint16(at, value, true);
      at += 2;
    },
    u32(value: number) {
      view.setUint32(at, value, true);
      at += 4;
    },
    u64(value: number) {
      view.setBigUint64(at, BigInt(value), true);
      at += 8;
    },
    raw(data: Uint8Array) {
      bytes.set(data, at);
      at += data.length;
    },
  };
}

export function localHeader(e: ZipEntry): Uint8Array {
  const w = writer(localHeaderSize(e));
  w.u32(0x04034b50);
  w.u16(e.zip64Sizes ? VERSION_ZIP64 : VERSION_PLAIN);
  w.u16(FLAGS);
  w.u16(0); // stored
  w.u16(e.dosTime);
  w.u16(e.dosDate);
  w.u32(0); // the CRC follows the data
  w.u32(e.zip64Sizes ? U32 : e.size);
  w.u32(e.zip64Sizes ? U32 : e.size);
  w.u16(e.nameBytes.length);
  w.u16(e.zip64Sizes ? 20 : 0);
  w.raw(e.nameBytes);
  if (e.zip64Sizes) {
    w.u16(0x0001);
    w.u16(16);
    w.u64(e.size);
    w.u64(e.size);
  }
  return w.bytes;
}

export function dataDescriptor(e: ZipEntry, crc: number): Uint8Array {
  const w = writer(descriptorSize(e));
  w.u32(0x08074b50);
  w.u32(crc);
  if (e.zip64Sizes) {
    w.u64(e.size);
    w.u64(e.size);
  } else {
    w.u32(e.size);
    w.u32(e.size);
  }
  return w.bytes;
}

function centralHeader(e: ZipEntry, crc: number): Uint8Array {
  const extra = centralExtraSize(e);
  const w = writer(46 + e.nameBytes.length + extra);
  const version = extra ? VERSION_ZIP64 : VERSION_PLAIN;
  w.u32(0x02014b50);
  w.u16(version | 0x0300); // made by: Unix, so no DOS attribute is read into names
  w.u16(version);
  w.u16(FLAGS);
  w.u16(0);
  w.u16(e.dosTime);
  w.u16(e.dosDate);
  w.u32(crc);
  w.u32(Math.min(e.size, U32));
  w.u32(Math.min(e.size, U32));
  w.u16(e.nameBytes.length);
  w.u16(extra);
  w.u16(0); // comment
  w.u16(0); // disk
  w.u16(0); // internal attributes
  w.u32((0o100644 << 16) >>> 0); // a regular file, rw-r--r--
  w.u32(Math.min(e.offset, U32));
  w.raw(e.nameBytes);
  if (extra) {
    w.u16(0x0001);
    w.u16(extra - 4);
    if (e.size >= U32) {
      w.u64(e.size);
      w.u64(e.size);
    }
    if (e.offset >= U32) w.u64(e.offset);
  }
  return w.bytes;
}

function endRecords(plan: ZipPlan): Uint8Array {
  const count = plan.entries.length;
  const w = writer((plan.zip64End ? 76 : 0) + 22);
  if (plan.zip64End) {
    const zip64EndOffset = plan.centralOffset + plan.centralSize;
    w.u32(0x06064b50);
    w.u64(44); // the record's size after this field
    w.u16(VERSION_ZIP64 | 0x0300);
    w.u16(VERSION_ZIP64);
    w.u32(0);
    w.u32(0);
    w.u64(count);
    w.u64(count);
    w.u64(plan.centralSize);
    w.u64(plan.centralOffset);
    w.u32(0x07064b50); // locator
    w.u32(0);
    w.u64(zip64EndOffset);
    w.u32(1);
  }
  w.u32(0x06054b50);
  w.u16(0);
  w.u16(0);
  w.u16(plan.zip64End ? U16 : count);
  w.u16(plan.zip64End ? U16 : count);
  w.u32(plan.zip64End ? U32 : plan.centralSize);
  w.u32(plan.zip64End ? U32 : plan.centralOffset);
  w.u16(0);
  return w.bytes;
}

/**
 * Writes a planned archive as its bytes are pushed: `start()` before each entry's content,
 * `update(chunk)` with each chunk of it (passed on unchanged), `end()` after it, `finish()` once
 * every entry has ended. For callers that receive content rather than pull it (a decrypting
 * download loop, a browser stream); `zipChunks` pulls with it.
 */
export class ZipWriter {
  readonly plan: ZipPlan;
  readonly #crc: Crc32;
  readonly #crcs: number[] = [];
  #entry: ZipEntry | null = null;
  #sum = 0;
  #seen = 0;

  constructor(plan: ZipPlan, crc: Crc32 = crc32) {
    this.plan = plan;
    this.#crc = crc;
  }

  /** The next entry's local header; the entry is `this.current`. */
  start(): Uint8Array {
    if (this.#entry) throw new Error(`${this.#entry.name} has not ended`);
    const entry = this.plan.entries[this.#crcs.length];
    if (!entry) throw new Error('every planned entry has been written');
    this.#entry = entry;
    this.#sum = 0;
    this.#seen = 0;
    return localHeader(entry);
  }

  get current(): ZipEntry | null {
    return this.#entry;
  }

  update(chunk: Uint8Array): Uint8Array {
    const entry = this.#entry;
    if (!entry) throw new Error('no entry started');
    this.#seen += chunk.length;
    if (this.#seen > entry.size) throw new Error(`${entry.name} has more bytes than planned`);
    this.#sum = this.#crc(chunk, this.#sum);
    return chunk;
  }

  /** The entry's data descriptor, once exactly its planned bytes have gone by. */
  end(): Uint8Array {
    const entry = this.#entry;
    if (!entry) throw new Error('no entry started');
    if (this.#seen !== entry.size) throw new Error(`${entry.name} ended after ${this.#seen} of ${entry.size} bytes`);
    this.#crcs.push(this.#sum);
    this.#entry = null;
    return dataDescriptor(entry, this.#sum);
  }

  /** The central directory (one piece per entry: never whole in memory) and the end records. */
  *finish(): Generator<Uint8Array> {
    if (this.#entry || this.#crcs.length !== this.plan.entries.length) throw new Error('entries are missing');
    for (const [index, entry] of this.plan.entries.entries()) yield centralHeader(entry, this.#crcs[index] as number);
    yield endRecords(this.plan);
  }
}

/** The bytes of an entry, supplied in order, exactly `entry.size` of them. */
export type EntryContent = (
  entry: ZipEntry,
  index: number,
) => AsyncIterable<Uint8Array> | Promise<AsyncIterable<Uint8Array>>;

/**
 * The archive's bytes, in order: each entry's content is opened only when its turn comes and
 * pulled chunk by chunk, so memory holds one chunk whatever the archive's size (the consumer's
 * pace is the producer's). An entry that supplies more or fewer bytes than planned fails the
 * archive rather than produce one whose offsets lie.
 */
export async function* zipChunks(
  plan: ZipPlan,
  content: EntryContent,
  crc: Crc32 = crc32,
): AsyncGenerator<Uint8Array, void, undefined> {
  const writer = new ZipWriter(plan, crc);
  for (const [index, entry] of plan.entries.entries()) {
    yield writer.start();
    for await (const chunk of await content(entry, index)) {
      if (chunk.length > 0) yield writer.update(chunk);
    }
    yield writer.end();
  }
  yield* writer.finish();
}
