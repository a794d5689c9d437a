import { setTimeout as sleep } from 'node:timers/promises';
import type { FileSource } from '../../sdk/src/index.ts';

// `--limit-rate`: caps the bytes a file source yields per second, so a send
// does not saturate a shared link. Chunks are split so the pace stays even.

const PIECE = 64 * 1024;

export function throttled(source: FileSource, bytesPerSecond: number): FileSource {
  return { ...source, stream: (start) => source.stream(start).pipeThrough(rateLimit(bytesPerSecond)) };
}

function rateLimit(bytesPerSecond: number): TransformStream<Uint8Array, Uint8Array> {
  const started = Date.now();
  let passed = 0;
  return new TransformStream({
    async transform(chunk, controller) {
      for (let offset = 0; offset < chunk.length; offset += PIECE) {
        const piece = chunk.subarray(offset, offset + PIECE);
        passed += piece.length;
        const wait = started + (passed / bytesPerSecond) * 1000 - Date.now();
        if (wait > 0) await sleep(wait);
        controller.enqueue(piece);
      }
    },
  });
}
