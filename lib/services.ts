import type { DatabasePool } from 'slonik';
import { CredentialCache } from './api-keys/credential-cache.ts';
import { UsageRecorder } from './api-keys/usage.ts';
import type { Config } from './config.ts';
import { type Keyring, parseKeyring } from './crypto/key-wrap.ts';
import { deriveKey } from './crypto/secrets.ts';
import { Paginator } from './pagination.ts';
import { createObjectStore, type ObjectStore } from './storage/object-store.ts';
import { createPublicDownloads, type PublicDownloads } from './transfers/download-gate.ts';
import { UploadGate } from './uploads/upload-gate.ts';
import { UploadSessions } from './uploads/upload-sessions.ts';

// What domain functions need, built once per process and passed down.
export type Services = {
  config: Config;
  db: DatabasePool;
  keys: { apiKeyPepper: Buffer; seal: Buffer; links: Buffer };
  keyring: Keyring;
  paginator: Paginator;
  /** What the API tells each family's workflows (FamilyWorkflows). */
  workflows: FamilyWorkflows;
  objects: ObjectStore;
  /** Public downloads: bounded, with an object-store pool of their own. */
  downloads: PublicDownloads;
  /** Uploads being received: bounded, each holding a part buffer (lib/uploads/upload-gate.ts). */
  uploads: UploadGate;
  /** tus chunks answered on receipt whose parts this process is still storing (lib/uploads/upload-sessions.ts). */
  uploadSessions: UploadSessions;
  usage: UsageRecorder;
  /** API keys' credentials in process, emptied on every change (lib/api-keys/credential-cache.ts). */
  credentials: CredentialCache;
};

/**
 * What the API tells each family's workflows (starts and signals), by family. Each family adds its
 * own member from its folder, beside its lifecycle type:
 *
 *     declare module '../services.ts' {
 *       interface FamilyWorkflows { vaults: VaultLifecycle }
 *     }
 *
 * and its Temporal adapter (lib/<family>/temporal.ts) is listed in lib/family-workflows.ts.
 */
// biome-ignore lint/suspicious/noEmptyInterface: the families declare its members (declaration merging)
export interface FamilyWorkflows {}

/** `warn`: where the credential cache says it is off (the process's logger); stderr when omitted. */
export function buildServices(
  config: Config,
  db: DatabasePool,
  workflows: FamilyWorkflows,
  warn?: (message: string) => void,
): Services {
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
    workflows,
    objects: createObjectStore(config.s3),
    downloads: createPublicDownloads(config),
    uploads: new UploadGate(config.transfers.uploads),
    uploadSessions: new UploadSessions((error) =>
      (warn ?? console.error)(`an answered tus chunk could not be stored: ${String(error)}`),
    ),
    usage: new UsageRecorder(db),
    credentials: new CredentialCache(warn),
  };
}
