import { temporalKeyLifecycle } from './api-keys/temporal.ts';
import { temporalCoffreLifecycle } from './coffres/temporal.ts';
import { temporalGdprExports } from './gdpr/temporal.ts';
import { temporalIntakeLifecycle } from './intakes/temporal.ts';
import type { FamilyWorkflows } from './services.ts';
import type { WorkflowStarter } from './temporal.ts';
import { temporalTransferLifecycle } from './transfers/temporal.ts';
import { temporalWebhookDeliverer } from './webhooks/temporal.ts';

// Every family's workflow adapter (lib/<family>/temporal.ts), listed once, for the API's
// composition root (lib/composition.ts). The adapters are not on the families' declarations:
// a workflow imports its activities' types, and the activities import lib/<family>/, so a
// declaration (or a domain function) importing its adapter would close a circle of imports.
// A family that declares a member of FamilyWorkflows and is missing here does not compile.
export function temporalFamilyWorkflows(starter: WorkflowStarter): FamilyWorkflows {
  return {
    apiKeys: temporalKeyLifecycle(starter),
    transfers: temporalTransferLifecycle(starter),
    webhooks: temporalWebhookDeliverer(starter),
    intakes: temporalIntakeLifecycle(starter),
    coffres: temporalCoffreLifecycle(starter),
    gdpr: temporalGdprExports(starter),
  };
}
