import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { type EntryContent, planZip, type ZipInput, type ZipPlan, zipChunks } from '../../sdk/src/zip.ts';

// The Node side of the one ZIP writer (sdk/src/zip.ts, shared with the share
// page's end-to-end archives): a Readable that pulls each entry's content only
// when its turn comes and only as fast as the reader takes the archive, with
// zlib's native CRC-32.

export type { ZipInput, ZipPlan } from '../../sdk/src/zip.ts';
export { planZip };

/** A streamed archive: its exact length before the first byte, the bytes, and how many were produced. */
export type ZipStream = { plan: ZipPlan; stream: Readable; produced: () => number };

/**
 * `open(index)` is called once per entry, in order, when the archive reaches it; its stream must
 * supply exactly the planned size. Destroying the archive destroys the entry being read.
 */
export function zipStream(inputs: readonly ZipInput[], open: (index: number) => Promise<Readable>): ZipStream {
  const plan = planZip(inputs);
  let current: Readable | null = null;
  const content: EntryContent = async (_entry, index) => {
    current = await open(index);
    return current;
  };
  let produced = 0;
  async function* counted() {
    for await (const chunk of zipChunks(plan, content, crc32)) {
      produced += chunk.length;
      yield chunk;
    }
  }
  const stream = Readable.from(counted(), { objectMode: false, highWaterMark: 64 * 1024 });
  stream.once('close', () => current?.destroy());
  return { plan, stream, produced: () => produced };
}
