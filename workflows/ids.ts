// The workflow ids the families share: the generic lifecycles' (by family) and the sandbox
// purge's; a workflow of one family exports its own id builder beside it (`transferWorkflowId`
// in transferLifecycle.ts, `gdprExportWorkflowId` in gdprExport.ts...). Ids are derived from the
// resource a workflow acts for, so starting twice finds the one that runs (Temporal
// refuses a duplicate id) and anyone holding the resource's id can signal or
// await its workflow. Running workflows, docs and tests rely on these exact
// shapes: change one only with a migration of the workflows that run.
//
// Imported by the workflows (a vault's expiry ends its items' workflows) and by
// the API and the worker that start them: pure functions, nothing else.

/**
 * The id prefixes of the generic lifecycles, by family: `ownerExpiry` (one per owner, for its
 * expiry) and `fileLifecycle` (one per file owner). A family the generic lifecycles run adds its
 * line here; the intakes' and vaults' keep the shapes of the workflows they replaced.
 */
const LIFECYCLE_ID_PREFIXES = {
  intakes: { owner: 'intake', files: 'intake-document' },
  coffres: { owner: 'coffre', files: 'coffre-item' },
} as const;

/** A family whose expiry and stored files the generic lifecycles run. */
export type LifecycleFamily = keyof typeof LIFECYCLE_ID_PREFIXES;

export const LIFECYCLE_FAMILIES = Object.keys(LIFECYCLE_ID_PREFIXES) as LifecycleFamily[];

/** `ownerExpiry`: one per owner of the family, for its expiry. */
export const expiryWorkflowId = (family: LifecycleFamily, ownerId: string) =>
  `${LIFECYCLE_ID_PREFIXES[family].owner}-${ownerId}`;

/** `fileLifecycle`: one per file owner of the family (an intake document, a vault item). */
export const storedFilesWorkflowId = (family: LifecycleFamily, fileOwnerId: string) =>
  `${LIFECYCLE_ID_PREFIXES[family].files}-${fileOwnerId}`;

/** `ownerExpiry` of an intake. */
export const intakeWorkflowId = (intakeId: string) => expiryWorkflowId('intakes', intakeId);

/** `fileLifecycle` of an intake document. */
export const intakeDocumentWorkflowId = (documentId: string) => storedFilesWorkflowId('intakes', documentId);

/** `ownerExpiry` of a vault. */
export const coffreWorkflowId = (coffreId: string) => expiryWorkflowId('coffres', coffreId);

/** `fileLifecycle` of a vault item (by its stored-file uuid). */
export const coffreItemWorkflowId = (itemId: string) => storedFilesWorkflowId('coffres', itemId);

/** The task queue of a deployment (TEMPORAL_TASK_QUEUE's default, lib/config.ts). */
export const DEFAULT_TASK_QUEUE = 'valise';

/**
 * The Temporal Schedule that starts `purgeSandbox`: `sandbox-purge` on the default task queue.
 * Schedules are per namespace, so a worker on another task queue (a test run sharing the dev
 * server) has its own, `sandbox-purge-<task queue>`, deleted when its worker stops, and never
 * moves another's.
 */
export const sandboxPurgeScheduleId = (taskQueue: string) =>
  taskQueue === DEFAULT_TASK_QUEUE ? 'sandbox-purge' : `sandbox-purge-${taskQueue}`;

/** The workflow each firing of the schedule starts (Temporal appends the firing time). */
export const sandboxPurgeWorkflowId = (scheduleId: string) => `${scheduleId}-run`;
