import { createConnection, createServer, type Socket } from 'node:net';
import { freePort } from './ports.ts';

// A TCP relay between a process of a fault test and a real server (clamd, say) that the test can
// make stall, as a slow server would: past `hold(bytes)`, what a client sends beyond that many
// bytes on one connection is no longer read, so the client blocks mid-request, inside whatever
// it was doing. The fault is injected then, at a known point; `release()` lets everything through.

export type TcpGate = {
  port: number;
  /**
   * From now on, a connection that has sent `bytes` is held there. Resolves once one is: its
   * client is blocked mid-request.
   */
  hold(bytes: number): Promise<void>;
  /** Every held connection goes on, and new ones are not held. */
  release(): void;
  close(): Promise<void>;
};

export async function startTcpGate(target: { host: string; port: number }): Promise<TcpGate> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let allowance = Number.POSITIVE_INFINITY;
  let onHeld: (() => void) | undefined;
  /** The held connections, each with what lets it go on. */
  const held = new Map<Socket, () => void>();

  const server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    let sent = 0;
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      held.delete(client);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.pipe(client);
    const forward = (chunk: Buffer) => {
      if (upstream.write(chunk)) return;
      client.pause();
      upstream.once('drain', () => {
        if (!held.has(client)) client.resume();
      });
    };
    client.on('data', (chunk: Buffer) => {
      const room = Math.max(allowance - sent, 0);
      if (chunk.length <= room) {
        sent += chunk.length;
        forward(chunk);
        return;
      }
      // Past the allowance: what fits goes, the rest waits with the connection.
      sent += room;
      if (room > 0) forward(chunk.subarray(0, room));
      client.pause();
      held.set(client, () => {
        held.delete(client);
        // Resumed first: its next chunk comes on a later tick, after this one's rest.
        client.resume();
        forward(chunk.subarray(room));
      });
      onHeld?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  return {
    port,
    hold: (bytes) => {
      allowance = bytes;
      return new Promise<void>((resolve) => {
        onHeld = () => {
          onHeld = undefined;
          resolve();
        };
      });
    },
    release: () => {
      allowance = Number.POSITIVE_INFINITY;
      onHeld = undefined;
      for (const goOn of [...held.values()]) goOn();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
