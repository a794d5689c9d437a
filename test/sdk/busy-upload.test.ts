import { request } from 'node:http';
import test from 'ava';
import { type FileSource, SendInterruptedError, Valise } from '../../sdk/src/index.ts';
import { content, fetchBytes, links, waitForTransfer } from '../helpers/transfers.ts';
import { sdkSession } from './session.ts';

// A file is written by one request at a time, under a lease. A second sender
// that meets an upload whose earlier request (a killed process's, say) still
// holds it is answered 409 at once, before the server reads a body that may be
// many megabytes, and the connection is closed. A client that is still sending
// (and sending slower than the network carries, as a throttled or disk-bound
// sender does) writes into the closed connection before it reads the answer,
// and sees a broken pipe (EPIPE, ECONNRESET) instead of the 409. Either way the
// upload is busy: the sender must wait for the lease, not spend its resumes.

const MiB = 1024 * 1024;
const sdk = sdkSession('SDK busy uploads');

/** A PUT of the whole file that sends its first bytes and then nothing: it holds the lease until released. */
function holdLease(url: string, size: number) {
  const held = request(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
  });
  held.on('error', () => undefined); // released by destroying it, as a killed process would be
  held.write(Buffer.alloc(64 * 1024));
  return { release: () => held.destroy() };
}

/** The file from memory in 64 KiB pieces, a millisecond apart: slower than loopback, as a throttled sender is. */
function throttled(name: string, bytes: Buffer): FileSource {
  const PIECE = 64 * 1024;
  return {
    name,
    size: bytes.length,
    stream: (start) => {
      let at = start;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          if (at >= bytes.length) return controller.close();
          controller.enqueue(new Uint8Array(bytes.subarray(at, at + PIECE)));
          at += PIECE;
        },
      });
    },
  };
}

test('a send that meets a held lease waits for it, though it sees broken pipes, and spends no resume', async (t) => {
  const bytes = content(24 * MiB);
  const file = throttled('busy.bin', bytes);
  // Each PUT's outcome as the transport saw it: a status, or the error that ended it.
  const outcomes: string[] = [];
  const valise = new Valise({
    apiKey: sdk.ws.keys.live,
    baseUrl: sdk.api.url,
    fetch: async (input, init) => {
      if (init?.method !== 'PUT') return fetch(input, init);
      try {
        const response = await fetch(input, init);
        outcomes.push(String(response.status));
        return response;
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        outcomes.push(cause?.code ?? cause?.message ?? String(error));
        throw error;
      }
    },
  });
  const session = await valise.transfers.prepare({ files: [file] });
  const holder = holdLease(session.files[0]?.url ?? '', bytes.length);
  // Let the holder's request reach the handler and take the lease.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // The earlier request dies while the second sender is being refused.
  const release = setTimeout(holder.release, 6_000);
  t.teardown(() => {
    clearTimeout(release);
    holder.release();
  });

  const sending = valise.transfers.resume(session, { files: [file], maxResumes: 0 });
  const sent = await sending.catch((error: unknown) => {
    const cause = error instanceof SendInterruptedError ? ` (${error.message})` : '';
    t.fail(`the send gave up${cause}; PUT outcomes: ${outcomes.join(', ')}`);
    throw error;
  });
  t.log(`PUT outcomes: ${outcomes.join(', ')}`);
  t.true(
    outcomes.some((outcome) => outcome === 'EPIPE' || outcome === 'ECONNRESET'),
    `the refusals were seen as broken pipes at least once: ${outcomes.join(', ')}`,
  );
  t.is(outcomes.at(-1), '200');

  await waitForTransfer(sdk.api, sdk.ws.keys.live, sent.transfer.id, (transfer) => transfer.status === 'active');
  const link = (await links(sdk.api, sent.transfer.short_code)).body.files[0].download_url;
  t.true((await fetchBytes(link)).bytes.equals(bytes), 'the file is stored whole, byte for byte');
});
