import type { Paths } from './generated/openapi.ts';

// Named types for what the API sends and accepts, all derived from the
// generated OpenAPI types: none is written by hand, so none can drift.

type Operation<P extends keyof Paths, M extends keyof Paths[P]> = Paths[P][M];
export type ResponseOf<P extends keyof Paths, M extends keyof Paths[P]> =
  Operation<P, M> extends { response: infer R } ? R : never;
export type BodyOf<P extends keyof Paths, M extends keyof Paths[P]> =
  Operation<P, M> extends { body: infer B } ? NonNullable<B> : never;
export type QueryOf<P extends keyof Paths, M extends keyof Paths[P]> =
  Operation<P, M> extends { query: infer Q } ? Q : never;
type ItemOf<L> = L extends { data: Array<infer T> } ? T : never;
/** List filters without the paging parameters, which the iterator drives. */
export type FiltersOf<P extends keyof Paths, M extends keyof Paths[P]> = Omit<QueryOf<P, M>, 'cursor' | 'offset'>;

export type Transfer = ResponseOf<'/v1/transfers/{id}', 'get'>;
export type TransferFile = Transfer['files'][number];
export type TransferListItem = ItemOf<ResponseOf<'/v1/transfers', 'get'>>;
export type CreateTransferParams = BodyOf<'/v1/transfers', 'post'>;
export type CreatedTransfer = ResponseOf<'/v1/transfers', 'post'>;
export type UploadUrl = CreatedTransfer['upload_urls'][number];
export type ListTransfersParams = FiltersOf<'/v1/transfers', 'get'>;
export type ApproveTransferParams = BodyOf<'/v1/transfers/{id}/approve', 'post'>;
export type UpdateTransferParams = BodyOf<'/v1/transfers/{id}', 'patch'>;
export type TransferFolder = ResponseOf<'/v1/transfers/{id}/folder', 'put'>;

export type SharedTransfer = ResponseOf<'/v1/shares/{code}', 'get'>;
/** `files` is null behind a password until `shares.unlock`. */
export type SharedFile = NonNullable<SharedTransfer['files']>[number];
export type UnlockShareParams = BodyOf<'/v1/shares/{code}/unlock', 'post'>;
export type DownloadLinks = ResponseOf<'/v1/shares/{code}/download-links', 'post'>;
export type DownloadLinksParams = BodyOf<'/v1/shares/{code}/download-links', 'post'>;
export type UploadStatus = ResponseOf<'/v1/uploads/{token}', 'get'>;

export type ApiKey = ResponseOf<'/v1/api-keys/{id}', 'get'>;
export type CreatedApiKey = ResponseOf<'/v1/api-keys', 'post'>;
export type CreateApiKeyParams = BodyOf<'/v1/api-keys', 'post'>;
export type UpdateApiKeyParams = BodyOf<'/v1/api-keys/{id}', 'patch'>;
export type RevokeApiKeyParams = BodyOf<'/v1/api-keys/{id}', 'delete'>;
export type RevokedApiKey = ResponseOf<'/v1/api-keys/{id}', 'delete'>;
export type RotateApiKeyParams = BodyOf<'/v1/api-keys/{id}/rotate', 'post'>;
export type RotatedApiKey = ResponseOf<'/v1/api-keys/{id}/rotate', 'post'>;

export type Webhook = ResponseOf<'/v1/webhooks', 'patch'>;
export type CreatedWebhook = ResponseOf<'/v1/webhooks', 'post'>;
export type CreateWebhookParams = BodyOf<'/v1/webhooks', 'post'>;
export type UpdateWebhookParams = BodyOf<'/v1/webhooks', 'patch'>;
export type DeletedWebhook = ResponseOf<'/v1/webhooks', 'delete'>;
export type RotatedWebhookSecret = ResponseOf<'/v1/webhooks/{id}/rotate-secret', 'post'>;
export type WebhookDeliveryAttempt = ResponseOf<'/v1/webhooks/{id}/test', 'post'>;
export type WebhookDelivery = ItemOf<ResponseOf<'/v1/webhooks/{id}/deliveries', 'get'>>;
export type ListDeliveriesParams = FiltersOf<'/v1/webhooks/{id}/deliveries', 'get'>;
export type EventCatalog = ResponseOf<'/v1/webhooks/events', 'get'>;
export type EventType = ItemOf<EventCatalog>;

export type Rule = ResponseOf<'/v1/rules/{id}', 'get'>;
export type CreatedRule = ResponseOf<'/v1/rules', 'post'>;
export type CreateRuleParams = BodyOf<'/v1/rules', 'post'>;
export type UpdateRuleParams = BodyOf<'/v1/rules/{id}', 'patch'>;
export type DeletedRule = ResponseOf<'/v1/rules/{id}', 'delete'>;
export type ListRulesParams = FiltersOf<'/v1/rules', 'get'>;
export type RuleExecution = ItemOf<ResponseOf<'/v1/rules/{id}/executions', 'get'>>;

export type Recipient = ResponseOf<'/v1/recipients/{id}', 'get'>;
export type CreateRecipientParams = BodyOf<'/v1/recipients', 'post'>;
export type UpdateRecipientParams = BodyOf<'/v1/recipients/{id}', 'patch'>;
export type DeletedRecipient = ResponseOf<'/v1/recipients/{id}', 'delete'>;
export type ListRecipientsParams = FiltersOf<'/v1/recipients', 'get'>;
export type TransferRecipient = ItemOf<ResponseOf<'/v1/transfers/{id}/recipients', 'get'>>;

export type Folder = ResponseOf<'/v1/folders', 'post'>;
export type CreateFolderParams = BodyOf<'/v1/folders', 'post'>;

export type AuditEntry = ItemOf<ResponseOf<'/v1/audit', 'get'>>;
export type ListAuditParams = FiltersOf<'/v1/audit', 'get'>;
export type ExportAuditParams = QueryOf<'/v1/audit/export', 'get'>;
export type AuditVerification = ResponseOf<'/v1/audit/verify', 'get'>;
/**
 * An entry of an NDJSON export: the list's fields plus its environment and chain fields. The
 * export is a file (no JSON schema in the OpenAPI document), so this one type is written out;
 * docs/audit.md, "Export", lists the same fields.
 */
export type ExportedAuditEntry = AuditEntry & {
  environment: 'live' | 'test' | 'sandbox';
  seq: number;
  prev_hash: string;
  entry_hash: string;
  personal_digest: string;
  collapsed: boolean;
  erased_at: string | null;
};

export type Collection = ResponseOf<'/v1/collections/{id}', 'get'>;
export type CollectionTransfer = Collection['transfers'][number];
export type CollectionSummary = ItemOf<ResponseOf<'/v1/collections', 'get'>>;
export type CreateCollectionParams = BodyOf<'/v1/collections', 'post'>;
export type UpdateCollectionParams = BodyOf<'/v1/collections/{id}', 'patch'>;
export type AddCollectionTransfersParams = BodyOf<'/v1/collections/{id}/transfers', 'post'>;
export type DeletedCollection = ResponseOf<'/v1/collections/{id}', 'delete'>;
export type SharedCollection = ResponseOf<'/v1/shared-collections/{code}', 'get'>;
export type SharedCollectionTransfer = SharedCollection['transfers'][number];
export type CollectionDownloadLinksParams = BodyOf<'/v1/shared-collections/{code}/download-links', 'post'>;

export type Me = ResponseOf<'/v1/me', 'get'>;
export type Welcome = ResponseOf<'/v1/welcome', 'get'>;

// The API's vocabularies, named: each is the type of a field the document enumerates.
export type Environment = ApiKey['environment'];
export type KeyType = ApiKey['key_type'];
export type RevocationReason = NonNullable<RevokeApiKeyParams['reason']>;
export type TransferStatus = Transfer['status'];
export type EncryptionMode = Transfer['encryption_mode'];
export type ApprovalStatus = NonNullable<Transfer['approval_status']>;
export type ApprovalDecision = ApproveTransferParams['decision'];
export type UploadState = TransferFile['upload_state'];
export type BlockedReason = NonNullable<SharedTransfer['blocked_reason']>;
export type DeliveryTrigger = WebhookDeliveryAttempt['trigger'];
export type RuleActionType = CreateRuleParams['action_type'];
export type RuleExecutionStatus = RuleExecution['status'];
export type AuditOutcome = AuditEntry['status'];

export type Intake = ResponseOf<'/v1/intakes/{id}', 'get'>;
export type CreatedIntake = ResponseOf<'/v1/intakes', 'post'>;
export type CreateIntakeParams = BodyOf<'/v1/intakes', 'post'>;
export type UpdateIntakeParams = BodyOf<'/v1/intakes/{id}', 'patch'>;
export type ListIntakesParams = FiltersOf<'/v1/intakes', 'get'>;
export type DeletedIntake = ResponseOf<'/v1/intakes/{id}', 'delete'>;
export type IntakeDocument = ResponseOf<'/v1/intakes/{id}/documents/{docId}', 'get'>;
export type ListIntakeDocumentsParams = FiltersOf<'/v1/intakes/{id}/documents', 'get'>;
export type DeletedIntakeDocument = ResponseOf<'/v1/intakes/{id}/documents/{docId}', 'delete'>;
export type PublishableKey = ResponseOf<'/v1/intakes/{id}/publishable-keys/{keyId}', 'delete'>;
export type CreatePublishableKeyParams = BodyOf<'/v1/intakes/{id}/publishable-keys', 'post'>;
export type IntakeForm = ResponseOf<'/v1/intakes/{id}/form', 'get'>;
export type StartSubmissionParams = BodyOf<'/v1/intakes/{id}/submissions', 'post'>;
export type IntakeSubmission = ResponseOf<'/v1/intakes/{id}/submissions', 'post'>;
export type CollectionAccess = SharedCollectionTransfer['access'];

export type Coffre = ResponseOf<'/v1/coffres/{id}', 'get'>;
export type CreateCoffreParams = BodyOf<'/v1/coffres', 'post'>;
export type UpdateCoffreParams = BodyOf<'/v1/coffres/{id}', 'patch'>;
export type DeletedCoffre = ResponseOf<'/v1/coffres/{id}', 'delete'>;
export type CoffreMember = ResponseOf<'/v1/coffres/{id}/members/{memberId}', 'patch'>;
export type InvitedCoffreMember = ResponseOf<'/v1/coffres/{id}/members', 'post'>;
export type InviteCoffreMemberParams = BodyOf<'/v1/coffres/{id}/members', 'post'>;
export type UpdateCoffreMemberParams = BodyOf<'/v1/coffres/{id}/members/{memberId}', 'patch'>;
export type ResendCoffreInvitationParams = NonNullable<
  BodyOf<'/v1/coffres/{id}/members/{memberId}/invitation', 'post'>
>;
export type CoffreItem = ResponseOf<'/v1/coffres/{id}/items/{itemId}', 'get'>;
export type CreateCoffreItemParams = BodyOf<'/v1/coffres/{id}/items', 'post'>;
export type CreatedCoffreItem = ResponseOf<'/v1/coffres/{id}/items', 'post'>;
export type DeletedCoffreItem = ResponseOf<'/v1/coffres/{id}/items/{itemId}', 'delete'>;
export type CoffreAccessEntry = ItemOf<ResponseOf<'/v1/coffres/{id}/access-log', 'get'>>;
export type CoffreMemberView = ResponseOf<'/v1/coffre-access/{token}', 'get'>;
export type CoffreVisibleItems = ResponseOf<'/v1/coffre-access/{token}/items', 'get'>;
export type CoffreDownloadLink = ResponseOf<'/v1/coffre-access/{token}/items/{itemId}/download-link', 'post'>;
export type CoffreAccessLevel = CoffreMember['access'];
/** A link that streams every file of a share (or a collection) as one ZIP: `shares.openArchive`. */
export type ArchiveLink = ResponseOf<'/v1/shares/{code}/archive-link', 'post'>;
export type CollectionArchiveLinkParams = NonNullable<BodyOf<'/v1/shared-collections/{code}/archive-link', 'post'>>;

export type LegalDocumentSummary = ItemOf<ResponseOf<'/v1/legal/documents', 'get'>>;
export type LegalDocument = ResponseOf<'/v1/legal/documents/{slug}', 'get'>;
export type AcceptLegalDocumentParams = BodyOf<'/v1/legal/acceptances', 'post'>;
export type LegalAcceptance = ResponseOf<'/v1/legal/acceptances', 'post'>;

export type LegalAcceptanceList = ResponseOf<'/v1/gdpr/acceptances', 'get'>;
export type LegalAcceptanceEntry = ItemOf<LegalAcceptanceList>;
export type GdprExport = ResponseOf<'/v1/gdpr/exports/{id}', 'get'>;
export type CreateGdprExportParams = BodyOf<'/v1/gdpr/exports', 'post'>;
export type ScimToken = ItemOf<ResponseOf<'/v1/scim/tokens', 'get'>>;
export type CreateScimTokenParams = NonNullable<BodyOf<'/v1/scim/tokens', 'post'>>;
export type CreatedScimToken = ResponseOf<'/v1/scim/tokens', 'post'>;
export type RevokedScimToken = ResponseOf<'/v1/scim/tokens/{id}', 'delete'>;
export type ScimAuditList = ResponseOf<'/v1/scim/audit', 'get'>;
export type ScimAuditEvent = ItemOf<ScimAuditList>;
export type ListScimAuditParams = QueryOf<'/v1/scim/audit', 'get'>;
export type BillingSubscription = ResponseOf<'/v1/billing/subscription', 'get'>;
export type BillingInvoice = ItemOf<ResponseOf<'/v1/billing/invoices', 'get'>>;
export type ProcessorEventList = ResponseOf<'/v1/billing/processor-events', 'get'>;
export type ProcessorEvent = ItemOf<ProcessorEventList>;
export type ListProcessorEventsParams = QueryOf<'/v1/billing/processor-events', 'get'>;
export type McpToken = ItemOf<ResponseOf<'/v1/mcp/tokens', 'get'>>;
export type CreateMcpTokenParams = NonNullable<BodyOf<'/v1/mcp/tokens', 'post'>>;
export type CreatedMcpToken = ResponseOf<'/v1/mcp/tokens', 'post'>;
export type RevokedMcpToken = ResponseOf<'/v1/mcp/tokens/{id}', 'delete'>;
export type McpEndpointDescriptor = ResponseOf<'/v1/mcp/hosted/{workspaceId}', 'get'>;
export type McpControlRequest = NonNullable<BodyOf<'/v1/mcp/hosted/{workspaceId}', 'post'>>;
export type McpControlAnswer = ResponseOf<'/v1/mcp/hosted/{workspaceId}', 'post'>;
