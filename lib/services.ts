import type { DatabasePool } from 'slonik';
import { CredentialCache } from './api-keys/credential-cache.ts';
import type { KeyLifecycle } from './api-keys/lifecycle.ts';
import { UsageRecorder } from './api-keys/usage.ts';
import type { CoffreLifecycle } from './coffres/lifecycle.ts';
import type { Config } from './config.ts';
import { type Keyring, parseKeyring } from './crypto/key-wrap.ts';
import { deriveKey } from './crypto/secrets.ts';
import type { GdprExportLifecycle } from './gdpr/lifecycle.ts';
import type { IntakeLifecycle } from './intakes/lifecycle.ts';
import { Paginator } from './pagination.ts';
import { createObjectStore, type ObjectStore } from './storage/object-store.ts';
import { createPublicDownloads, type PublicDownloads } from './transfers/download-gate.ts';
import type { TransferLifecycle } from './transfers/lifecycle.ts';
import { UploadGate } from './uploads/upload-gate.ts';
import type { WebhookDeliverer } from './webhooks/attempts.ts';

// What domain functions need, built once per process and passed down.
export type Services = {
  config: Config;
  db: DatabasePool;
  keys: { apiKeyPepper: Buffer; seal: Buffer; links: Buffer };
  keyring: Keyring;
  paginator: Paginator;
  /** The durable timers of API keys (Temporal workflows, lib/temporal.ts). */
  keyTimers: KeyLifecycle;
  /** Starts and signals each transfer's workflow (lib/temporal.ts). */
  transferWorkflows: TransferLifecycle;
  /** Starts and signals the intake and intake-document workflows (lib/temporal.ts). */
  intakeWorkflows: IntakeLifecycle;
  /** Runs one webhook delivery attempt now, on the workers. */
  webhooks: WebhookDeliverer;
  objects: ObjectStore;
  /** Public downloads: bounded, with an object-store pool of their own. */
  downloads: PublicDownloads;
  /** Uploads being received: bounded, each holding a part buffer (lib/uploads/upload-gate.ts). */
  uploads: UploadGate;
  usage: UsageRecorder;
  /** API keys' credentials in process, emptied on every change (lib/api-keys/credential-cache.ts). */
  credentials: CredentialCache;
  /** Starts and signals the vault, vault-item and invitation-mail workflows (lib/temporal.ts). */
  coffreWorkflows: CoffreLifecycle;
  /** Starts the GDPR export workflow (lib/temporal.ts). */
  gdprExports: GdprExportLifecycle;
};

export type Lifecycles = {
  keys: KeyLifecycle;
  transfers: TransferLifecycle;
  intakes: IntakeLifecycle;
  webhooks: WebhookDeliverer;
  coffres: CoffreLifecycle;
  gdprExports: GdprExportLifecycle;
};

export function buildServices(config: Config, db: DatabasePool, lifecycles: Lifecycles): Services {
  return {
    config,
    db,
    keys: {
      apiKeyPepper: deriveKey(config.secret, 'api-key-hash'),
      seal: deriveKey(config.secret, 'seal'),
      links: deriveKey(config.secret, 'link-token'),
    },
    keyring: parseKeyring(config.masterKeys.spec, config.masterKeys.currentId),
    paginator: new Paginator(deriveKey(config.secret, 'cursor')),
    keyTimers: lifecycles.keys,
    transferWorkflows: lifecycles.transfers,
    intakeWorkflows: lifecycles.intakes,
    webhooks: lifecycles.webhooks,
    objects: createObjectStore(config.s3),
    downloads: createPublicDownloads(config),
    uploads: new UploadGate(config.transfers.uploads),
    usage: new UsageRecorder(db),
    credentials: new CredentialCache(),
    coffreWorkflows: lifecycles.coffres,
    gdprExports: lifecycles.gdprExports,
  };
}
