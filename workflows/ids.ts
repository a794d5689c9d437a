// Every workflow id, built in one place. Ids are derived from the resource a
// workflow acts for, so starting twice finds the one that runs (Temporal
// refuses a duplicate id) and anyone holding the resource's id can signal or
// await its workflow. Running workflows, docs and tests rely on these exact
// shapes: change one only with a migration of the workflows that run.
//
// Imported by the workflows (runRule signals the transfer's workflow) and by
// the API and the dispatcher that start them: pure functions, nothing else.

import type { DeliveryTrigger } from '../lib/vocabulary.ts';

/** `transferLifecycle`: one per transfer. */
export const transferWorkflowId = (transferId: string) => `transfer-${transferId}`;

/** `expireApiKey`: one per key. */
export const apiKeyExpiryWorkflowId = (apiKeyId: string) => `api-key-expiry-${apiKeyId}`;

/** `endKeyRotationGrace`: one per rotated key value. */
export const rotationGraceWorkflowId = (secretId: string) => `api-key-rotation-grace-${secretId}`;

/** `deliverWebhook` on the retry schedule: exactly one per (event, webhook). */
export const deliveryWorkflowId = (eventId: string, webhookId: string) => `webhook-delivery-${eventId}-${webhookId}`;

/**
 * `deliverWebhook` for one asked-for attempt (a test ping or a redelivery):
 * each request is its own run, told apart by `nonce` (a random UUID).
 */
export const oneAttemptDeliveryWorkflowId = (
  trigger: Exclude<DeliveryTrigger, 'scheduled'>,
  webhookId: string,
  nonce: string,
) => `webhook-${trigger}-${webhookId}-${nonce}`;

/** `runRule`: exactly one per (rule, event). */
export const ruleRunWorkflowId = (ruleId: string, eventId: string) => `rule-${ruleId}-${eventId}`;

/** `intakeLifecycle`: one per intake, for its expiry. */
export const intakeWorkflowId = (intakeId: string) => `intake-${intakeId}`;

/** `intakeDocumentLifecycle`: one per intake document. */
export const intakeDocumentWorkflowId = (documentId: string) => `intake-document-${documentId}`;

/** `coffreLifecycle`: one per vault, for its expiry. */
export const coffreWorkflowId = (coffreId: string) => `coffre-${coffreId}`;

/** `coffreItemLifecycle`: one per vault item (by its stored-file uuid). */
export const coffreItemWorkflowId = (itemId: string) => `coffre-item-${itemId}`;

/** `coffreInvitation`: one per invitation issued (a member's nonce changes with each). */
export const coffreInvitationWorkflowId = (memberId: string, nonce: string) => `coffre-invitation-${memberId}-${nonce}`;

/** `gdprExport`: one per export. */
export const gdprExportWorkflowId = (exportId: string) => `gdpr-export-${exportId}`;
