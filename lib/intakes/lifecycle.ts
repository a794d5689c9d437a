import type { Tenant } from '../tenancy.ts';

// What the API tells the intake workflows (lib/intakes/temporal.ts implements it):
// `intake-<id>` owns an intake's expiry, `intake-document-<id>` a document's
// upload deadline, scan, retention and deletion.
export type IntakeLifecycle = {
  /** Starts the intake's workflow, or tells the running one that its expiry changed. */
  watchExpiry(tenant: Tenant, intakeId: string): Promise<void>;
  /** The intake was deleted: its workflow ends. */
  intakeDeleted(intakeId: string): Promise<void>;
  startDocument(tenant: Tenant, documentId: string): Promise<void>;
  fileUploaded(documentId: string, fileId: string): Promise<void>;
  /** The document was deleted (its keys are gone already): its workflow removes the blobs and ends. */
  documentDeleted(documentId: string): Promise<void>;
};

// services.workflows.intakes (lib/services.ts), built by lib/intakes/temporal.ts.
declare module '../services.ts' {
  interface FamilyWorkflows {
    /** Starts and signals the intake and intake-document workflows. */
    intakes: IntakeLifecycle;
  }
}
