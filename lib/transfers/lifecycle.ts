import type { Tenant } from '../tenancy.ts';
import type { ApprovalDecision } from '../vocabulary.ts';

// What the API tells a transfer's workflow (transfer-<id>). Implemented with
// Temporal in lib/transfers/temporal.ts; the workflow owns every timed transition.
export type TransferLifecycle = {
  start(tenant: Tenant, transferId: string): Promise<void>;
  fileUploaded(transferId: string, fileId: string): Promise<void>;
  revoked(transferId: string): Promise<void>;
  approvalDecided(transferId: string, decision: ApprovalDecision): Promise<void>;
  expiryExtended(transferId: string, expiresAt: Date): Promise<void>;
};

// services.workflows.transfers (lib/services.ts), built by lib/transfers/temporal.ts.
declare module '../services.ts' {
  interface FamilyWorkflows {
    /** Starts and signals each transfer's workflow. */
    transfers: TransferLifecycle;
  }
}
