import { connect } from 'node:net';
import { withTimeout } from '../lib/with-timeout.ts';

/**
 * One component the service depends on, and how to tell it is answering.
 * `critical: false` marks one the service can serve without (Redis: the rate
 * limiter then counts in process), so its failure degrades without a 503.
 */
export type HealthProbe = { name: string; check: () => Promise<void>; critical?: boolean };

const PROBE_TIMEOUT_MS = 2_000;

/**
 * Runs every probe, by component name. A component that fails is reported `down` with a fixed
 * sentence: the error itself (a database or S3 message, an address, a stack)
 * goes only to `onFailure`, for the log.
 */
export async function runProbes(
  probes: readonly HealthProbe[],
  onFailure: (component: string, error: unknown) => void = () => undefined,
) {
  const results = await Promise.all(
    probes.map(async (probe) => {
      const started = performance.now();
      try {
        await withTimeout(probe.check(), PROBE_TIMEOUT_MS);
        return [probe.name, { status: 'ok', latency_ms: Math.round(performance.now() - started) }] as const;
      } catch (error) {
        onFailure(probe.name, error);
        return [probe.name, { status: 'down', error: 'not answering' }] as const;
      }
    }),
  );
  const serving = probes.every((probe, i) => probe.critical === false || results[i]?.[1].status === 'ok');
  return { components: Object.fromEntries(results), serving };
}

/**
 * The overall verdict: `ok` when every component is, `degraded` otherwise.
 * The service is unhealthy (503) only when a critical probe failed; a
 * component that is merely `degraded` still serves, so a load balancer must
 * keep sending it traffic.
 */
export function healthReport<C extends Record<string, { status: string }>>(components: C, serving: boolean) {
  const healthy = Object.values(components).every((c) => c.status === 'ok');
  return { status: healthy ? ('ok' as const) : ('degraded' as const), components, serving };
}

/** Opens a TCP connection, optionally sends a greeting, and checks the first reply. */
export function tcpProbe(host: string, port: number, send: string | null, expect: RegExp): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      let received = '';
      socket.setTimeout(PROBE_TIMEOUT_MS, () => socket.destroy(new Error('timed out')));
      socket.on('connect', () => {
        if (send !== null) socket.write(send);
      });
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        if (expect.test(received)) {
          socket.destroy();
          resolve();
        }
      });
      socket.on('error', reject);
      socket.on('close', () => reject(new Error(`unexpected reply: ${received.slice(0, 60)}`)));
    });
}
