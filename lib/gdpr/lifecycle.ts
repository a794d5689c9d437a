import type { Tenant } from '../tenancy.ts';

// What the API tells the GDPR export workflow (lib/gdpr/temporal.ts implements it): `gdpr-export-<id>`
// collects an export family by family, seals it, and deletes it when its retention ends.
export type GdprExportLifecycle = {
  /** Starts the export's workflow; starting it twice finds the one that runs. */
  start(tenant: Tenant, exportId: string): Promise<void>;
};

// services.workflows.gdpr (lib/services.ts), built by lib/gdpr/temporal.ts.
declare module '../services.ts' {
  interface FamilyWorkflows {
    /** Starts the GDPR export workflow. */
    gdpr: GdprExportLifecycle;
  }
}
