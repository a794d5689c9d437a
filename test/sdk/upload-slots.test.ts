import net from 'node:net';
import test from 'ava';
import { eventually } from '../helpers/api.ts';
import { content, createTransfer } from '../helpers/transfers.ts';
import { sdkSession } from './session.ts';

// The API receives only so many uploads at once (docs/transfers.md, "Concurrent uploads"): a PUT
// past them is 429 with Retry-After, and transfers.send waits for a place instead of failing.

const MiB = 1024 * 1024;
const sdk = sdkSession('SDK upload slots', { UPLOADS_MAX: '1' });

/** An upload that sends its head and a few bytes, then nothing: it holds the process's one slot. */
async function holdTheSlot(url: string, size: number) {
  const target = new URL(url);
  const socket = net.connect({ host: target.hostname, port: Number(target.port) });
  socket.on('error', () => {});
  socket.write(
    `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\nxyz`,
  );
  await eventually(async () => (sdk.api.services.uploads.active() === 1 ? true : undefined), 10_000, 25);
  return socket;
}

test('transfers.send waits for an upload slot (429 with Retry-After) and completes once one is free', async (t) => {
  const other = await createTransfer(sdk.api, sdk.ws.keys.live, { files: [{ name: 'held.bin', size: MiB }] });
  const holder = await holdTheSlot(other.upload_urls[0]?.url ?? '', MiB);
  t.teardown(() => holder.destroy());

  const bytes = content(2 * MiB + 5);
  const sending = sdk.valise.transfers.send({
    files: [{ blob: new Blob([new Uint8Array(bytes)]), name: 'waits.bin' }],
  });
  let settled = false;
  sending.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  t.false(settled, 'still waiting while the slot is held');
  holder.destroy();
  const sent = await sending;
  const transfer = await sdk.valise.transfers.get(sent.transfer.id);
  t.is(transfer.files[0]?.upload_state, 'uploaded');
});
