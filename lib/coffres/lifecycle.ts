import type { Tenant } from '../tenancy.ts';

// What the API tells the vault workflows (lib/coffres/temporal.ts implements it):
// `coffre-<id>` owns a vault's expiry, `coffre-item-<uuid>` an item's upload
// deadline, scan and blob removal, and each invitation mail is one short run.
export type CoffreLifecycle = {
  /** Starts the vault's workflow, or tells the running one that its expiry changed. */
  watchExpiry(tenant: Tenant, coffreId: string): Promise<void>;
  /** The vault was deleted (its items' keys are gone already): its workflow ends. */
  coffreDeleted(coffreId: string): Promise<void>;
  /** Mails the member the invitation their row names now (the worker signs the same link again). */
  sendInvitation(tenant: Tenant, memberId: string, nonce: string): Promise<void>;
  startItem(tenant: Tenant, itemId: string): Promise<void>;
  itemUploaded(itemId: string): Promise<void>;
  /** The item was shredded (its key is gone already): its workflow removes the blob and ends. */
  itemDeleted(itemId: string): Promise<void>;
};

// services.workflows.coffres (lib/services.ts), built by lib/coffres/temporal.ts.
declare module '../services.ts' {
  interface FamilyWorkflows {
    /** Starts and signals the vault, vault-item and invitation-mail workflows. */
    coffres: CoffreLifecycle;
  }
}
