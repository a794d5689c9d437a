// The activities a family implements to have its rows run by the two generic lifecycle workflows
// (docs/architecture.md, "Workflows"): `ownerExpiry`, an owner that lives until an expiry which
// may move, and `fileLifecycle`, stored files uploaded, scanned and kept until their retention.
// A family declares them once, in its activity factory, with `lifecycleActivities`; the workflows
// call them as `<family>.<step>`, so a new family needs no workflow of its own.

/** An owner's expiry as `ownerExpiry` reads it; `expired` is final, `live` follows `expiresAt`. */
export type OwnerExpiry = { state: 'live' | 'expired' | 'deleted'; expiresAt: string | null };

/** What expiring did: whether the owner stays ended, and the file owners whose blobs go with it. */
export type ExpiryOutcome = {
  /** False when the owner may be reopened by a moved expiry (an intake): the workflow waits on. */
  final: boolean;
  /** Their keys are destroyed already; `ownerExpiry` removes each one's blobs and ends its workflow. */
  fileOwnerIds: string[];
};

/** The steps of `ownerExpiry`, each one activity named `<family>.<step>`. */
export type OwnerExpiryActivities = {
  /** The owner's expiry. Started inside the creating transaction: not visible yet must be retryable. */
  loadExpiry(ownerId: string): Promise<OwnerExpiry>;
  /** Ends the owner if it is past its expiry, once; again after that, answers the same. */
  expire(ownerId: string): Promise<ExpiryOutcome>;
};

/** What `fileLifecycle` needs at its start. */
export type FilePlan = {
  /** Deleted (or rejected) already: nothing is waited for, the blobs are removed. */
  ended: boolean;
  fileIds: string[];
  uploadedFileIds: string[];
  uploadDeadline: string;
  /**
   * How often the stored uploads are re-read while they are awaited, in case a signal was lost.
   * Absent from plans recorded before the re-reads, and from those of the replaced workflow types.
   */
  uploadRecheckMs?: number;
  /** Server-mode content, scanned file by file once received; end-to-end content cannot be. */
  scanned: boolean;
};

/** What receiving the last file did. */
export type FileReceipt = {
  /** False when the files were shredded instead (their uploader lost the right meanwhile). */
  kept: boolean;
  /** When retention ends and the files are destroyed; null: kept until deleted. */
  retentionUntil: string | null;
};

/**
 * The steps of `fileLifecycle`, each one activity named `<family>.<step>`, for one file owner (an
 * intake document, a vault item: a row owning one or more stored files). Every one is idempotent.
 */
export type FileActivities = {
  /** Retryable while the creating transaction may not have committed yet. */
  plan(ownerId: string): Promise<FilePlan>;
  /** The files stored whole: re-read while they are awaited, in case the API's signal was lost. */
  uploadedFileIds(ownerId: string): Promise<string[]>;
  /** Every file is stored: records it (the family's event), starts retention. */
  receive(ownerId: string): Promise<FileReceipt>;
  /** Tells whom the family tells of a receipt; best effort, and may do nothing. */
  notifyReceived(ownerId: string): Promise<void>;
  /** The owner shows it is being scanned; may do nothing when receiving said so already. */
  beginScan(ownerId: string): Promise<void>;
  /** Scans one file and records its verdict; a file that can never be verified fails non-retryably. */
  scanFile(fileId: string): Promise<string>;
  /** Infected content is shredded (`rejected`); answers the owner's status after (`available` goes on). */
  settleScan(ownerId: string): Promise<string>;
  /** A file failed its scan for good: the owner is `rejected` and its keys destroyed. */
  rejectUnverified(ownerId: string): Promise<void>;
  /** The upload missed its deadline, or retention ended: keys destroyed, the row kept as a tombstone. */
  destroy(ownerId: string): Promise<void>;
  /** Removes the blobs and any unfinished multipart upload, and records them removed. */
  purge(ownerId: string): Promise<void>;
};

/** A family's activities under the names the generic workflows call: `<family>.<step>`. */
export type FamilyActivities<Family extends string, Steps> = {
  [Step in keyof Steps & string as `${Family}.${Step}`]: Steps[Step];
};

/** Names a family's lifecycle steps `<family>.<step>`, as `ownerExpiry` and `fileLifecycle` call them. */
export function lifecycleActivities<
  Family extends string,
  Steps extends Partial<OwnerExpiryActivities & FileActivities>,
>(family: Family, steps: Steps): FamilyActivities<Family, Steps> {
  return Object.fromEntries(
    Object.entries(steps).map(([step, activity]) => [`${family}.${step}`, activity]),
  ) as FamilyActivities<Family, Steps>;
}
