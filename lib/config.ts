import { z } from 'zod';
import { isIpOrCidr } from './net/ip-allow-list.ts';

// Every setting comes from the environment, validated once here. Defaults are
// the dev profile that `make up` runs; docs/configuration.md lists them all.

const port = z.coerce.number().int().min(0).max(65535);
const positive = z.coerce.number().int().positive();

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A duration such as `500ms`, `30s`, `5m`, `2h` or `3d`, in milliseconds. */
const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)$/, 'a duration such as 30s, 5m or 2h')
  .transform((value) => {
    const [, amount = '0', unit = 'ms'] = /^(\d+)(ms|s|m|h|d)$/.exec(value) ?? [];
    return Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  });
const durationList = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()))
  .pipe(z.array(duration).min(1).max(20));

/** A listener's `host:port` (an IPv6 host in brackets), or `off` for none. */
const listenAddress = z.string().transform((value, ctx) => {
  if (value === 'off') return null;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):(\d{1,5})$/.exec(value);
  const listenPort = Number(match?.[2]);
  if (!match?.[1] || !(listenPort >= 0 && listenPort <= 65535)) {
    ctx.addIssue({ code: 'custom', message: 'host:port (127.0.0.1:9464, [::1]:9464) or off' });
    return z.NEVER;
  }
  return { host: match[1].replace(/^\[|\]$/g, ''), port: listenPort };
});

/** A comma-separated list of secrets, each at least 16 characters (a processor's `whsec_…`). */
const secretList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  )
  .pipe(z.array(z.string().min(16, 'secrets of at least 16 characters, separated by commas')).max(5));

/** A comma-separated list of addresses or CIDR ranges (IPv4 or IPv6); empty means none. */
const addressList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  )
  .pipe(z.array(z.string().refine(isIpOrCidr, 'addresses or CIDR ranges (10.0.0.0/8, fd00::/8) separated by commas')));

// Values that were ever published in this repository as development defaults: no process
// accepts them, whatever NODE_ENV says. The project's scripts give the processes they start
// values generated once per checkout instead (scripts/lib.sh, export_local_secrets).
const KNOWN_DEV_SECRETS = new Set([
  'valise-dev-secret-do-not-use-in-production-0000000000',
  'valise-docker-dev-only-secret-change-me-000000',
]);
// The dev master key that was published: 32 bytes of 0x5a.
const DEV_MASTER_KEY = Buffer.alloc(32, 0x5a);
// The local MinIO's published password (scripts/stack.sh restarts a MinIO still running with it).
const DEV_S3_SECRET = 'valise-dev-secret';
// The dev stack's billing webhook secret (scripts/lib.sh, docs/billing.md): published, so refused in production.
export const DEV_BILLING_WEBHOOK_SECRET = 'whsec_valise_dev_billing_published_not_secret';
const GiB = 1024 ** 3;

/**
 * Why a secret must not guard production data, or null: a value so regular
 * that it is no secret (a few distinct characters or bytes, such as a single
 * repeated byte). Random values pass with room to
 * spare: 32 random base64 characters or bytes hold about 25 distinct ones.
 */
function weakSecret(value: Buffer | string): string | null {
  const unit = typeof value === 'string' ? 'character' : 'byte';
  const distinct = new Set<string | number>([...value]).size;
  if (distinct === 1) return `is a single repeated ${unit}`;
  if (distinct < 10) return `has only ${distinct} distinct ${unit}s`;
  return null;
}

/**
 * Each key's problem, by key id: the published dev key always, weak keys in production; the
 * format itself is parseKeyring's.
 */
function weakMasterKeys(spec: string, production: boolean): string[] {
  return spec.split(',').flatMap((entry) => {
    const [id = '', encoded = ''] = entry.trim().split(':');
    const key = Buffer.from(encoded, 'base64');
    if (key.equals(DEV_MASTER_KEY)) return [`key "${id}" is a published development value`];
    if (!production) return [];
    if (key.length < 32) return [`key "${id}" is shorter than 32 bytes`];
    const problem = weakSecret(key);
    return problem ? [`key "${id}" ${problem}`] : [];
  });
}

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    API_HOST: z.string().default('127.0.0.1'),
    API_PORT: port.default(8080),
    PUBLIC_BASE_URL: z.url().optional(),
    // Unset: the instance's own documentation, served at /docs (api/plugins/web/docs.ts).
    DOCS_BASE_URL: z.url().optional(),
    // Replaced by TRUST_PROXY_HOPS / TRUSTED_PROXIES: `true` is refused below, `false` is accepted and means nothing.
    TRUST_PROXY: z.stringbool().optional(),
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
    TRUSTED_PROXIES: addressList.prefault(''),
    DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/valise'),
    DATABASE_POOL_SIZE: positive.default(10),
    REDIS_URL: z.string().default('redis://127.0.0.1:6379/0'),
    REDIS_PREFIX: z.string().default('valise:'),
    TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
    TEMPORAL_NAMESPACE: z.string().default('default'),
    TEMPORAL_TASK_QUEUE: z.string().default('valise'),
    // Prometheus' /metrics of each process, on a listener of its own (docs/operations.md, "Metrics").
    METRICS_ADDRESS: listenAddress.prefault('127.0.0.1:9464'),
    WORKER_METRICS_ADDRESS: listenAddress.prefault('127.0.0.1:9465'),
    // Traces go out over OTLP/HTTP only when an endpoint is set (docs/operations.md, "Traces").
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
    OTEL_SERVICE_NAME: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
    LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
    S3_ENDPOINT: z.url().default('http://127.0.0.1:9000'),
    S3_REGION: z.string().default('eu-west-1'),
    S3_BUCKET: z.string().default('valise'),
    S3_ACCESS_KEY_ID: z.string().default('valise'),
    S3_SECRET_ACCESS_KEY: z.string().optional(),
    // Sockets of the object-store pool that uploads, scans and other internal traffic share (per process).
    S3_MAX_SOCKETS: positive.default(50),
    // Waiting for a pooled socket and connecting; then until the response head; then silence on the socket.
    S3_CONNECT_TIMEOUT: duration.prefault('10s'),
    S3_REQUEST_TIMEOUT: duration.prefault('2m'),
    S3_SOCKET_TIMEOUT: duration.prefault('2m'),
    CLAMD_HOST: z.string().default('127.0.0.1'),
    CLAMD_PORT: port.default(3310),
    SMTP_HOST: z.string().default('127.0.0.1'),
    SMTP_PORT: port.default(1025),
    MAIL_UI_PORT: port.default(1080),
    MAIL_FROM: z.string().default('Valise <no-reply@valise.local>'),
    SMTP_SECURE: z.stringbool().default(false),
    SMTP_REQUIRE_TLS: z.stringbool().default(false),
    SMTP_USER: z.string().optional(),
    SMTP_PASSWORD: z.string().optional(),
    CLAMD_TIMEOUT_MS: positive.default(60_000),
    // clamd is silent while it scans, after the last byte: up to its MaxScanTime (2 min), after a wait for a thread.
    CLAMD_VERDICT_TIMEOUT_MS: positive.default(600_000),
    // Files one worker streams to clamd at once (the scanSlots semaphore, lib/composition.ts): at most clamd's MaxThreads (10).
    CLAMD_MAX_STREAMS: positive.max(1024).default(4),
    // clamd scans one stream on one thread: files of a transfer scanned side by side use more cores.
    SCANS_PER_TRANSFER: positive.max(16).default(2),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: z.stringbool().default(false),
    // Dev and tests: the only host names webhooks resolve, `name=address,…`; nothing else is looked up.
    WEBHOOK_HOSTS: z
      .string()
      .regex(/^([^=,\s]+=[^=,\s]+)(,[^=,\s]+=[^=,\s]+)*$/, 'name=address pairs separated by commas')
      .optional(),
    WEBHOOK_TIMEOUT_MS: positive.max(30_000).default(5_000),
    // Waits between attempts (docs/webhooks.md, "Retries"): 9 attempts over about 23.6 hours.
    WEBHOOK_RETRY_SCHEDULE: durationList.prefault('5s,1m,5m,30m,2h,5h,8h,8h'),
    WEBHOOK_DISABLE_AFTER: duration.prefault('72h'),
    VALISE_SECRET: z.string().min(32).optional(),
    RATE_LIMIT_READ: positive.default(600),
    RATE_LIMIT_WRITE: positive.default(120),
    RATE_LIMIT_EXPENSIVE: positive.default(30),
    RATE_LIMIT_PUBLIC: positive.default(120),
    RATE_LIMIT_AUTH_FAILURES: positive.default(30),
    MAX_JSON_BODY_BYTES: positive.default(1024 * 1024),
    REQUEST_HEADERS_TIMEOUT: duration.prefault('60s'),
    MFA_FAILURES_PER_15_MIN: positive.default(5),
    API_KEY_ROTATION_GRACE_HOURS: z.coerce.number().positive().max(168).default(24),
    MASTER_KEYS: z.string().optional(),
    MASTER_KEY_ID: z.string().optional(),
    // The payment processor's endpoint secrets (docs/billing.md), comma-separated: during a rotation
    // both the new and the old one verify. Unset: every processor delivery is refused.
    BILLING_WEBHOOK_SECRET: secretList.optional(),
    // S3 stores at most 5 TiB per object (lib/uploads/parts.ts).
    TRANSFER_MAX_FILE_BYTES: positive.max(5 * 1024 * GiB).default(100 * GiB),
    TRANSFER_MAX_FILES: positive.default(100),
    // A transfer waiting for approval re-reads its decision this often, in case the API's signal was lost.
    TRANSFER_APPROVAL_RECHECK: duration.prefault('1h'),
    // The workers look this often for ended resources whose objects remain (lib/storage/sweeper.ts).
    OBJECT_SWEEP_INTERVAL: duration.prefault('1m'),
    // The `sandbox-purge` schedule starts the sandbox's purge this often (docs/sandbox-purge.md).
    SANDBOX_PURGE_INTERVAL: duration.prefault('15m'),
    TRANSFER_MAX_EXPIRY_HOURS: z.coerce
      .number()
      .positive()
      .default(24 * 30),
    TRANSFER_DEFAULT_EXPIRY_HOURS: z.coerce
      .number()
      .positive()
      .default(24 * 7),
    UPLOAD_WINDOW_HOURS: z.coerce
      .number()
      .positive()
      .max(24 * 7)
      .default(24),
    DOWNLOAD_LINK_SECONDS: positive.default(300),
    // A stalled client is cut off after the idle timeout; a trickling one after the request timeout.
    UPLOAD_IDLE_TIMEOUT: duration.prefault('60s'),
    UPLOAD_REQUEST_TIMEOUT: duration.prefault('6h'),
    UPLOAD_LEASE: duration.prefault('2m'),
    // A transfer, intake document or vault item waiting for its uploads re-reads which are stored
    // this often, in case the API's signal was lost (Temporal unreachable as the last byte landed).
    UPLOAD_RECHECK: duration.prefault('5m'),
    UPLOAD_PARTS_STORING: z.coerce.number().int().min(0).max(16).default(2),
    // Uploads received at once, per API process: per client address, per holder of upload URLs
    // (a transfer, a vault, an intake's publishable key), in all. Each holds a part buffer.
    UPLOADS_PER_IP: positive.default(8),
    UPLOADS_PER_KEY: positive.default(16),
    UPLOADS_MAX: positive.default(32),
    // S3's limit. Lower only in tests, to give small files big files' part plans: a file's plan
    // follows from it, so changing it under uploads in flight would break their resumption.
    UPLOAD_MAX_PARTS: positive.max(10_000).default(10_000),
    // Larger parts stream straight into the object store as they arrive instead of being buffered.
    UPLOAD_PART_BUFFER_MAX: z.coerce
      .number()
      .int()
      .min(0)
      .default(64 * 1024 * 1024),
    DOWNLOAD_IDLE_TIMEOUT: duration.prefault('60s'),
    DOWNLOAD_REQUEST_TIMEOUT: duration.prefault('6h'),
    // A download taking less than this (bytes a second) over a window, past the first, is cut off; 0: never.
    DOWNLOAD_MIN_RATE: z.coerce.number().int().min(0).default(4096),
    DOWNLOAD_RATE_WINDOW: duration.prefault('60s'),
    // Downloads streaming at once, per API process: per client address, per transfer, in all
    // (also the size of the downloads' own object-store pool).
    DOWNLOADS_PER_IP: positive.default(8),
    DOWNLOADS_PER_TRANSFER: positive.default(32),
    DOWNLOADS_MAX: positive.default(64),
    PASSWORD_ATTEMPTS_PER_15_MIN: positive.default(10),
    // Submissions a public intake takes per hour and per day unless the intake sets its own, and
    // "submission received" notices it mails per hour (each to every notify address).
    INTAKE_SUBMISSIONS_PER_HOUR: positive.max(1_000_000).default(100),
    INTAKE_SUBMISSIONS_PER_DAY: positive.max(1_000_000).default(1000),
    INTAKE_NOTICES_PER_HOUR: positive.default(20),
    PASSWORD_LINK_ATTEMPTS_PER_15_MIN: positive.default(100),
  })
  .superRefine((env, ctx) => {
    if (env.TRUST_PROXY) {
      ctx.addIssue({
        code: 'custom',
        path: ['TRUST_PROXY'],
        message:
          'is no longer supported: it believed the first X-Forwarded-For entry, which any client can write. ' +
          'Set TRUST_PROXY_HOPS to the number of reverse proxies in front of Valise, and/or TRUSTED_PROXIES to ' +
          'their addresses (CIDR ranges), then remove TRUST_PROXY (docs/configuration.md)',
      });
    }
    // No defaults for the secrets: a default would be a published value (docs/configuration.md).
    const local = 'the project\'s scripts generate local ones (docs/configuration.md, "Local secrets")';
    for (const name of ['VALISE_SECRET', 'MASTER_KEYS', 'S3_SECRET_ACCESS_KEY'] as const) {
      if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: `is required: ${local}` });
    }
    if (env.VALISE_SECRET && KNOWN_DEV_SECRETS.has(env.VALISE_SECRET)) {
      ctx.addIssue({
        code: 'custom',
        path: ['VALISE_SECRET'],
        message: `is a published development value, refused: ${local}`,
      });
    }
    if (env.S3_SECRET_ACCESS_KEY === DEV_S3_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['S3_SECRET_ACCESS_KEY'],
        message: `is a published development value, refused: ${local}`,
      });
    }
    if (env.NODE_ENV === 'production' && env.BILLING_WEBHOOK_SECRET?.includes(DEV_BILLING_WEBHOOK_SECRET)) {
      ctx.addIssue({
        code: 'custom',
        path: ['BILLING_WEBHOOK_SECRET'],
        message: "is the dev stack's published value, refused in production: use the processor's endpoint secret",
      });
    }
    if (env.NODE_ENV === 'production' && env.WEBHOOK_ALLOW_PRIVATE_TARGETS) {
      ctx.addIssue({
        code: 'custom',
        path: ['WEBHOOK_ALLOW_PRIVATE_TARGETS'],
        message: 'is for development and tests only',
      });
    }
    if (env.NODE_ENV === 'production' && env.WEBHOOK_HOSTS) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOK_HOSTS'], message: 'is for development and tests only' });
    }
    if (env.MASTER_KEYS) {
      for (const keyProblem of weakMasterKeys(env.MASTER_KEYS, env.NODE_ENV === 'production')) {
        ctx.addIssue({
          code: 'custom',
          path: ['MASTER_KEYS'],
          message: `${keyProblem}, refused: generate keys with \`openssl rand -base64 32\``,
        });
      }
    }
    // An obviously weak value would protect nothing: production refuses to start rather than run with it.
    const problem = env.VALISE_SECRET && weakSecret(env.VALISE_SECRET);
    if (env.NODE_ENV === 'production' && problem) {
      ctx.addIssue({
        code: 'custom',
        path: ['VALISE_SECRET'],
        message: `${problem}, refused in production: generate one with \`openssl rand -base64 48\``,
      });
    }
  });

export type Config = ReturnType<typeof toConfig>;

const publicBaseUrlOf = (env: z.infer<typeof schema>): string =>
  env.PUBLIC_BASE_URL ?? `http://${env.API_HOST}:${env.API_PORT}`;

/** This instance's documentation (api/plugins/web/docs.ts), unless DOCS_BASE_URL names another. */
const docsBaseUrlOf = (env: z.infer<typeof schema>): string =>
  (env.DOCS_BASE_URL ?? `${publicBaseUrlOf(env)}/docs`).replace(/\/+$/, '');

function toConfig(env: z.infer<typeof schema>) {
  return {
    env: env.NODE_ENV,
    api: {
      host: env.API_HOST,
      port: env.API_PORT,
      publicBaseUrl: publicBaseUrlOf(env),
      /** Base of every error's `doc_url` and of /v1/welcome's `docs_url`: absolute, no trailing slash. */
      docsBaseUrl: docsBaseUrlOf(env),
      /** Which hops of X-Forwarded-For are believed (api/client-ip.ts); neither set means none. */
      proxies: { hops: env.TRUST_PROXY_HOPS, addresses: env.TRUSTED_PROXIES },
      maxJsonBodyBytes: env.MAX_JSON_BODY_BYTES,
      /** Longest a request's head may take to arrive, however steadily it trickles (api/server.ts). */
      headersTimeoutMs: env.REQUEST_HEADERS_TIMEOUT,
    },
    database: { url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE },
    redis: { url: env.REDIS_URL, prefix: env.REDIS_PREFIX },
    temporal: {
      address: env.TEMPORAL_ADDRESS,
      namespace: env.TEMPORAL_NAMESPACE,
      taskQueue: env.TEMPORAL_TASK_QUEUE,
    },
    /** What operators watch (docs/operations.md): metrics listeners, trace export, logs. */
    observability: {
      apiMetrics: env.METRICS_ADDRESS,
      workerMetrics: env.WORKER_METRICS_ADDRESS,
      /** OTLP/HTTP base URL (traces go to `<url>/v1/traces`); none: no tracing at all. */
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: env.OTEL_SERVICE_NAME,
      logLevel: env.LOG_LEVEL,
      /** Unset: pretty in development on a terminal, JSON otherwise. */
      logFormat: env.LOG_FORMAT,
    },
    /**
     * Ended resources whose objects remain (their workflow's signal lost) are found every
     * `intervalMs` and their objects deleted once ended that long ago: within two intervals.
     */
    objectSweep: { intervalMs: env.OBJECT_SWEEP_INTERVAL },
    /** The sandbox's purge of data older than 24 hours runs every `intervalMs` (workflows/purgeSandbox.ts). */
    sandboxPurge: { intervalMs: env.SANDBOX_PURGE_INTERVAL },
    s3: {
      endpoint: env.S3_ENDPOINT,
      region: env.S3_REGION,
      bucket: env.S3_BUCKET,
      accessKeyId: env.S3_ACCESS_KEY_ID,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? '',
      maxSockets: env.S3_MAX_SOCKETS,
      connectTimeoutMs: env.S3_CONNECT_TIMEOUT,
      requestTimeoutMs: env.S3_REQUEST_TIMEOUT,
      socketTimeoutMs: env.S3_SOCKET_TIMEOUT,
    },
    clamd: {
      host: env.CLAMD_HOST,
      port: env.CLAMD_PORT,
      timeoutMs: env.CLAMD_TIMEOUT_MS,
      verdictTimeoutMs: env.CLAMD_VERDICT_TIMEOUT_MS,
      maxStreams: env.CLAMD_MAX_STREAMS,
      scansPerTransfer: env.SCANS_PER_TRANSFER,
    },
    smtp: {
      host: env.SMTP_HOST,
      port: env.SMTP_PORT,
      uiPort: env.MAIL_UI_PORT,
      from: env.MAIL_FROM,
      secure: env.SMTP_SECURE,
      requireTLS: env.SMTP_REQUIRE_TLS,
      auth: env.SMTP_USER && env.SMTP_PASSWORD ? { user: env.SMTP_USER, pass: env.SMTP_PASSWORD } : undefined,
    },
    secret: env.VALISE_SECRET ?? '',
    /** The processor's endpoint secrets a delivery's signature may be made with (docs/billing.md). */
    billing: { webhookSecrets: env.BILLING_WEBHOOK_SECRET ?? [] },
    rateLimits: {
      read: env.RATE_LIMIT_READ,
      write: env.RATE_LIMIT_WRITE,
      expensive: env.RATE_LIMIT_EXPENSIVE,
      public: env.RATE_LIMIT_PUBLIC,
      /** Failed authentications per client address (an IPv6 /64) per minute. */
      authFailures: env.RATE_LIMIT_AUTH_FAILURES,
    },
    apiKeys: { rotationGraceHours: env.API_KEY_ROTATION_GRACE_HOURS, mfaFailuresPer15Min: env.MFA_FAILURES_PER_15_MIN },
    webhooks: {
      allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      hosts: env.WEBHOOK_HOSTS
        ? new Map(
            env.WEBHOOK_HOSTS.toLowerCase()
              .split(',')
              .map((pair) => pair.split('=') as [string, string]),
          )
        : undefined,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      // Names this instance's documentation of what it sends, for whoever reads a receiver's logs.
      userAgent: `Valise-Webhooks/1.0 (+${docsBaseUrlOf(env)}/webhooks)`,
      retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE,
      disableAfterMs: env.WEBHOOK_DISABLE_AFTER,
    },
    intakes: {
      submissionsPerHour: env.INTAKE_SUBMISSIONS_PER_HOUR,
      submissionsPerDay: env.INTAKE_SUBMISSIONS_PER_DAY,
      noticesPerHour: env.INTAKE_NOTICES_PER_HOUR,
    },
    masterKeys: { spec: env.MASTER_KEYS ?? '', currentId: env.MASTER_KEY_ID },
    transfers: {
      maxFileBytes: env.TRANSFER_MAX_FILE_BYTES,
      maxFiles: env.TRANSFER_MAX_FILES,
      maxExpiryHours: env.TRANSFER_MAX_EXPIRY_HOURS,
      defaultExpiryHours: env.TRANSFER_DEFAULT_EXPIRY_HOURS,
      uploadWindowHours: env.UPLOAD_WINDOW_HOURS,
      downloadLinkSeconds: env.DOWNLOAD_LINK_SECONDS,
      uploads: {
        idleMs: env.UPLOAD_IDLE_TIMEOUT,
        requestMs: env.UPLOAD_REQUEST_TIMEOUT,
        leaseMs: env.UPLOAD_LEASE,
        recheckMs: env.UPLOAD_RECHECK,
        partsStoring: env.UPLOAD_PARTS_STORING,
        maxParts: env.UPLOAD_MAX_PARTS,
        partBufferMax: env.UPLOAD_PART_BUFFER_MAX,
        perIp: env.UPLOADS_PER_IP,
        perKey: env.UPLOADS_PER_KEY,
        max: env.UPLOADS_MAX,
      },
      downloads: {
        idleMs: env.DOWNLOAD_IDLE_TIMEOUT,
        requestMs: env.DOWNLOAD_REQUEST_TIMEOUT,
        minRate: env.DOWNLOAD_MIN_RATE,
        rateWindowMs: env.DOWNLOAD_RATE_WINDOW,
        perIp: env.DOWNLOADS_PER_IP,
        perTransfer: env.DOWNLOADS_PER_TRANSFER,
        max: env.DOWNLOADS_MAX,
      },
      /** Wrong share passwords per link and client address (an IPv6 /64) per 15-minute window. */
      passwordAttemptsPer15Min: env.PASSWORD_ATTEMPTS_PER_15_MIN,
      /** Wrong share passwords per link, all addresses together, past which only addresses that never failed are heard. */
      passwordLinkAttemptsPer15Min: env.PASSWORD_LINK_ATTEMPTS_PER_15_MIN,
      approvalRecheckMs: env.TRANSFER_APPROVAL_RECHECK,
    },
  };
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Invalid configuration:\n${problems}`);
  }
  return toConfig(parsed.data);
}
