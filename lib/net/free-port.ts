import { createServer } from 'node:net';

/**
 * A loopback port that nothing listens on right now: for a server about to start (the Temporal
 * SDK's metrics exporter takes an address, not a socket), or as an address that refuses connections.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
