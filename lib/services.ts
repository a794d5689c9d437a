import type { DatabasePool } from 'slonik';
import type { KeyLifecycle } from './api-keys/lifecycle.ts';
import { UsageRecorder } from './api-keys/usage.ts';
import type { Config } from './config.ts';
import { deriveKey } from './crypto/secrets.ts';
import { Paginator } from './pagination.ts';

// What domain functions need, built once per process and passed down.
export type Services = {
  config: Config;
  db: DatabasePool;
  keys: { apiKeyPepper: Buffer; seal: Buffer };
  paginator: Paginator;
  lifecycle: KeyLifecycle;
  usage: UsageRecorder;
};

export function buildServices(config: Config, db: DatabasePool, lifecycle: KeyLifecycle): Services {
  return {
    config,
    db,
    keys: { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
    paginator: new Paginator(deriveKey(config.secret, 'cursor')),
    lifecycle,
    usage: new UsageRecorder(db),
  };
}
