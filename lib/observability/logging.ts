import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from '../config.ts';

// Structured logs (docs/operations.md, "Logs"): one JSON object a line on stderr, where the
// processes have always written, so a log shipper reads them without parsing prose. The API's
// lines carry the request id, the route template and the workspace (api/observability.ts); no
// line carries a request's URL, headers or body, which hold bearer keys, upload and download
// tokens and passwords. The redaction below is the second guard, for an object logged in full.

/** Fields never written, wherever they appear in a logged object. */
export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers.cookie',
  '*.headers.cookie',
  '*.headers["idempotency-key"]',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
];

/**
 * The process's logger: JSON, or pino-pretty's coloured lines when LOG_FORMAT=pretty, or by default
 * in development on a terminal. pino-pretty is a development dependency: a production image
 * without it logs JSON, and says why once.
 */
export async function createLogger(config: Config, name: 'api' | 'worker'): Promise<Logger> {
  const { logFormat, logLevel } = config.observability;
  const pretty =
    logFormat === 'pretty' || (logFormat === undefined && config.env === 'development' && process.stderr.isTTY);
  const options = {
    name,
    level: logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
  };
  if (pretty) {
    const stream = await prettyStream();
    if (stream) return pino(options, stream);
    const logger = pino(options, pino.destination(2));
    logger.warn('LOG_FORMAT=pretty, but pino-pretty is not installed (a development dependency): logging JSON');
    return logger;
  }
  return pino(options, pino.destination(2));
}

async function prettyStream(): Promise<DestinationStream | null> {
  try {
    const { default: pretty } = await import('pino-pretty');
    return pretty({ destination: 2, colorize: process.stderr.isTTY, translateTime: 'SYS:HH:MM:ss.l', sync: true });
  } catch {
    return null;
  }
}
