import { createHash } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { SOCKET_HIGH_WATER_MARK } from '../api/http/writes-per-turn.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, links, put, waitForTransfer } from './helpers/transfers.ts';

// A download's pieces read in one turn of the event loop are written to the client together
// (api/http/writes-per-turn.ts): the response is corked for the turn, and the download's connection may queue
// SOCKET_HIGH_WATER_MARK bytes. What a client relies on around that: every byte arrives in order, a
// client that stops reading for a while still gets the rest, and the connection, kept alive, answers
// its next request (a cork left behind would hold that answer back). The speed is measured in
// bench/downloads.ts, not here.

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let api: TestApi;
let workspace: TestWorkspace;
const sockets: Socket[] = [];
/** A server-mode file of several segments and turns, not a multiple of either. */
const bytes = content(9 * MiB + 4099);
let shortCode: string;

test.before(async () => {
  api = await startApi({ RATE_LIMIT_PUBLIC: '100000' });
  api.server.listener.on('connection', (socket: Socket) => sockets.push(socket));
  workspace = await api.workspace('Download writes');
  const created = await createTransfer(api, workspace.keys.test, {
    files: [{ name: 'writes.bin', size: bytes.length }],
  });
  const answer = await put(created.upload_urls[0]?.url ?? '', bytes);
  if (answer.status !== 200) throw new Error(`fixture upload failed: ${answer.status}`);
  await waitForTransfer(api, workspace.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  shortCode = created.transfer.short_code;
});
test.after.always(() => api?.close());

const downloadUrl = async () => (await links(api, shortCode)).body.files[0].download_url as string;

/** A GET on `agent`, its body read whole, pausing `pauseMs` after the first MiB when asked. */
function get(agent: http.Agent, url: string, headers: Record<string, string> = {}, pauseMs = 0) {
  return new Promise<{ status: number; body: Buffer; reusedSocket: boolean; port: number }>((resolve, reject) => {
    const request = http.get(url, { agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      let received = 0;
      let paused = false;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (pauseMs > 0 && !paused && received >= MiB) {
          paused = true;
          response.pause();
          setTimeout(() => response.resume(), pauseMs);
        }
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks),
          reusedSocket: request.reusedSocket,
          port: request.socket?.localPort ?? 0,
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

test('a server-mode download arrives whole, and its kept-alive connection answers the next requests', async (t) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());

  const whole = await get(agent, await downloadUrl());
  t.is(whole.status, 200);
  t.is(whole.body.length, bytes.length);
  t.is(sha256(whole.body), sha256(bytes), 'the bytes, in order');

  // The same connection: a range, then a plain JSON request. Each must be answered promptly.
  const start = 3 * MiB + 5;
  const end = 7 * MiB + 11;
  const range = await Promise.race([
    get(agent, await downloadUrl(), { range: `bytes=${start}-${end}` }),
    delay(10_000).then(() => null),
  ]);
  t.truthy(range, 'the range on the kept-alive connection was answered within 10 s');
  t.true(range?.reusedSocket, 'over the same connection');
  t.is(range?.status, 206);
  t.is(sha256(range?.body ?? Buffer.alloc(0)), sha256(bytes.subarray(start, end + 1)));

  const next = await Promise.race([get(agent, `${api.url}/v1/welcome`), delay(10_000).then(() => null)]);
  t.truthy(next, 'the next request on that connection was answered within 10 s');
  t.true(next?.reusedSocket);
  t.is(next?.status, 200);
  // The download's connection may queue 1 MiB; a connection that served no download keeps Node's default.
  const served = sockets.find((socket) => socket.remotePort === whole.port);
  t.is(served?.writableHighWaterMark, SOCKET_HIGH_WATER_MARK);
  const plain = new http.Agent({ keepAlive: false });
  t.teardown(() => plain.destroy());
  const welcome = await get(plain, `${api.url}/v1/welcome`);
  const other = sockets.find((socket) => socket.remotePort === welcome.port);
  t.truthy(other);
  t.true((other?.writableHighWaterMark ?? 0) < SOCKET_HIGH_WATER_MARK);
});

test('a client that stops reading for a while still gets every byte', async (t) => {
  const agent = new http.Agent({ keepAlive: false });
  t.teardown(() => agent.destroy());
  const answer = await get(agent, await downloadUrl(), {}, 1500);
  t.is(answer.status, 200);
  t.is(sha256(answer.body), sha256(bytes));
});
