import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { freePort } from '../net/free-port.ts';

// The Temporal SDK's runtime of the worker process, installed before its first connection: its
// logs go through the process's logger, and its own metrics (task slots, poll latencies, sticky
// cache, activity and workflow task counts: docs/operations.md, "Metrics") are served by the SDK on
// a loopback port of its own, which the worker's /metrics appends to Valise's (one target to
// scrape per process).

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Installs the runtime; answers what reads the SDK's metrics in Prometheus' text format, or null
 * when the worker serves no metrics (WORKER_METRICS_ADDRESS=off).
 */
export async function installWorkerRuntime(config: Config, logger: Logger): Promise<(() => Promise<string>) | null> {
  const temporalLogger = new DefaultLogger('INFO', (entry) =>
    logger[LEVELS[entry.level]]({ ...entry.meta, component: 'temporal' }, entry.message),
  );
  if (config.observability.workerMetrics === null) {
    Runtime.install({ logger: temporalLogger });
    return null;
  }
  const bindAddress = `127.0.0.1:${await freePort()}`;
  Runtime.install({
    logger: temporalLogger,
    telemetryOptions: { metrics: { prometheus: { bindAddress } } },
  });
  return async () => {
    const response = await fetch(`http://${bindAddress}/metrics`);
    if (!response.ok) throw new Error(`the Temporal SDK's metrics answered ${response.status}`);
    return response.text();
  };
}
