import { HeadBucketCommand } from '@aws-sdk/client-s3';
import type { Client, Connection } from '@temporalio/client';
import type { Redis } from 'ioredis';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../lib/config.ts';
import { sql } from '../lib/db/sql.ts';
import { createS3Client } from '../lib/storage/s3-client.ts';
import { type HealthProbe, tcpProbe } from './health.ts';

export function defaultHealthProbes(deps: {
  config: Config;
  db: DatabasePool;
  redis: Redis;
  temporal: Client;
}): HealthProbe[] {
  const { config } = deps;
  // A pool of its own, with the object store's timeouts: a hung S3 never piles up probes.
  const { client: s3 } = createS3Client(config.s3, { maxSockets: 2 });
  return [
    {
      name: 'database',
      check: async () => void (await deps.db.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`)),
    },
    // Without Redis the rate limiter counts in process: the service degrades but still serves.
    { name: 'redis', check: async () => void (await deps.redis.ping()), critical: false },
    {
      name: 'temporal',
      check: async () => void (await (deps.temporal.connection as Connection).healthService.check({})),
    },
    {
      name: 'object_storage',
      check: async () => void (await s3.send(new HeadBucketCommand({ Bucket: config.s3.bucket }))),
    },
    { name: 'clamd', check: tcpProbe(config.clamd.host, config.clamd.port, 'zPING\0', /PONG/) },
    { name: 'smtp', check: tcpProbe(config.smtp.host, config.smtp.port, null, /^220/) },
  ];
}
