import { describe } from './arguments.ts';
import { InvalidArgumentError } from './errors.ts';
import type { DOCUMENTED_OPERATIONS } from './generated/openapi.ts';

// Which SDK method calls which API operation. The resources build their
// requests from this table, and test/sdk/drift.test.ts checks it both ways
// against the live OpenAPI document: every entry is a documented operation
// with a method behind it, and every documented operation is here or in
// EXCLUDED_OPERATIONS. The `satisfies` below already fails to compile when an
// entry names an operation the generated types do not know.

export type DocumentedOperation = (typeof DOCUMENTED_OPERATIONS)[number];

export const ROUTES = {
  'meta.me': 'GET /v1/me',
  'meta.welcome': 'GET /v1/welcome',

  'transfers.list': 'GET /v1/transfers',
  'transfers.create': 'POST /v1/transfers',
  'transfers.get': 'GET /v1/transfers/{id}',
  'transfers.update': 'PATCH /v1/transfers/{id}',
  'transfers.revoke': 'DELETE /v1/transfers/{id}',
  'transfers.approve': 'POST /v1/transfers/{id}/approve',
  'transfers.setFolder': 'PUT /v1/transfers/{id}/folder',
  'transfers.removeFolder': 'DELETE /v1/transfers/{id}/folder',
  'transfers.recipients': 'GET /v1/transfers/{id}/recipients',

  'uploads.status': 'GET /v1/uploads/{token}',
  'uploads.put': 'PUT /v1/uploads/{token}',

  'shares.get': 'GET /v1/shares/{code}',
  'shares.unlock': 'POST /v1/shares/{code}/unlock',
  'shares.downloadLinks': 'POST /v1/shares/{code}/download-links',
  'shares.openDownload': 'GET /v1/downloads/{token}',

  'apiKeys.list': 'GET /v1/api-keys',
  'apiKeys.create': 'POST /v1/api-keys',
  'apiKeys.get': 'GET /v1/api-keys/{id}',
  'apiKeys.update': 'PATCH /v1/api-keys/{id}',
  'apiKeys.revoke': 'DELETE /v1/api-keys/{id}',
  'apiKeys.rotate': 'POST /v1/api-keys/{id}/rotate',

  'webhooks.list': 'GET /v1/webhooks',
  'webhooks.create': 'POST /v1/webhooks',
  'webhooks.update': 'PATCH /v1/webhooks',
  'webhooks.delete': 'DELETE /v1/webhooks',
  'webhooks.eventTypes': 'GET /v1/webhooks/events',
  'webhooks.deliveries': 'GET /v1/webhooks/{id}/deliveries',
  'webhooks.test': 'POST /v1/webhooks/{id}/test',
  'webhooks.rotateSecret': 'POST /v1/webhooks/{id}/rotate-secret',
  'webhooks.retryDelivery': 'POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry',

  'rules.list': 'GET /v1/rules',
  'rules.create': 'POST /v1/rules',
  'rules.get': 'GET /v1/rules/{id}',
  'rules.update': 'PATCH /v1/rules/{id}',
  'rules.delete': 'DELETE /v1/rules/{id}',
  'rules.executions': 'GET /v1/rules/{id}/executions',

  'intakes.list': 'GET /v1/intakes',
  'intakes.create': 'POST /v1/intakes',
  'intakes.get': 'GET /v1/intakes/{id}',
  'intakes.update': 'PATCH /v1/intakes/{id}',
  'intakes.close': 'POST /v1/intakes/{id}/close',
  'intakes.delete': 'DELETE /v1/intakes/{id}',
  'intakes.listDocuments': 'GET /v1/intakes/{id}/documents',
  'intakes.getDocument': 'GET /v1/intakes/{id}/documents/{docId}',
  'intakes.deleteDocument': 'DELETE /v1/intakes/{id}/documents/{docId}',
  'intakes.createPublishableKey': 'POST /v1/intakes/{id}/publishable-keys',
  'intakes.listPublishableKeys': 'GET /v1/intakes/{id}/publishable-keys',
  'intakes.revokePublishableKey': 'DELETE /v1/intakes/{id}/publishable-keys/{keyId}',
  'intakes.getForm': 'GET /v1/intakes/{id}/form',
  'intakes.submit': 'POST /v1/intakes/{id}/submissions',
  'intakes.openDownload': 'GET /v1/intake-downloads/{token}',

  'folders.list': 'GET /v1/folders',
  'folders.create': 'POST /v1/folders',

  'audit.list': 'GET /v1/audit',
  'audit.export': 'GET /v1/audit/export',
  'audit.verify': 'GET /v1/audit/verify',

  'analytics.summary': 'GET /v1/analytics',
  'analytics.geo': 'GET /v1/analytics/geo',
  'analytics.funnel': 'GET /v1/analytics/funnel',
  'analytics.heatmap': 'GET /v1/analytics/heatmap',
  'analytics.topTransfers': 'GET /v1/analytics/top-transfers',
  'analytics.topRecipients': 'GET /v1/analytics/top-recipients',

  'scim.createToken': 'POST /v1/scim/tokens',
  'scim.listTokens': 'GET /v1/scim/tokens',
  'scim.revokeToken': 'DELETE /v1/scim/tokens/{id}',
  'scim.audit': 'GET /v1/scim/audit',

  'billing.subscription': 'GET /v1/billing/subscription',
  'billing.invoices': 'GET /v1/billing/invoices',
  'billing.processorEvents': 'GET /v1/billing/processor-events',

  'mcp.listTokens': 'GET /v1/mcp/tokens',
  'mcp.createToken': 'POST /v1/mcp/tokens',
  'mcp.revokeToken': 'DELETE /v1/mcp/tokens/{id}',
  'mcp.describe': 'GET /v1/mcp/hosted/{workspaceId}',
  'mcp.control': 'POST /v1/mcp/hosted/{workspaceId}',

  'collections.list': 'GET /v1/collections',
  'collections.create': 'POST /v1/collections',
  'collections.get': 'GET /v1/collections/{id}',
  'collections.update': 'PATCH /v1/collections/{id}',
  'collections.delete': 'DELETE /v1/collections/{id}',
  'collections.addTransfers': 'POST /v1/collections/{id}/transfers',
  'collections.removeTransfer': 'DELETE /v1/collections/{id}/transfers/{transferId}',
  'collections.rotateShareLink': 'POST /v1/collections/{id}/rotate-share-link',
  'collections.disableShareLink': 'DELETE /v1/collections/{id}/share-link',
  'collections.getShared': 'GET /v1/shared-collections/{code}',
  'collections.sharedDownloadLinks': 'POST /v1/shared-collections/{code}/download-links',
  'recipients.list': 'GET /v1/recipients',
  'recipients.create': 'POST /v1/recipients',
  'recipients.get': 'GET /v1/recipients/{id}',
  'recipients.update': 'PATCH /v1/recipients/{id}',
  'recipients.delete': 'DELETE /v1/recipients/{id}',
  'coffres.list': 'GET /v1/coffres',
  'coffres.create': 'POST /v1/coffres',
  'coffres.get': 'GET /v1/coffres/{id}',
  'coffres.update': 'PATCH /v1/coffres/{id}',
  'coffres.delete': 'DELETE /v1/coffres/{id}',
  'coffres.inviteMember': 'POST /v1/coffres/{id}/members',
  'coffres.listMembers': 'GET /v1/coffres/{id}/members',
  'coffres.updateMember': 'PATCH /v1/coffres/{id}/members/{memberId}',
  'coffres.revokeMember': 'DELETE /v1/coffres/{id}/members/{memberId}',
  'coffres.resendInvitation': 'POST /v1/coffres/{id}/members/{memberId}/invitation',
  'coffres.createItem': 'POST /v1/coffres/{id}/items',
  'coffres.listItems': 'GET /v1/coffres/{id}/items',
  'coffres.getItem': 'GET /v1/coffres/{id}/items/{itemId}',
  'coffres.deleteItem': 'DELETE /v1/coffres/{id}/items/{itemId}',
  'coffres.accessLog': 'GET /v1/coffres/{id}/access-log',
  'coffres.open': 'GET /v1/coffre-access/{token}',
  'coffres.listVisibleItems': 'GET /v1/coffre-access/{token}/items',
  'coffres.memberDownloadLink': 'POST /v1/coffre-access/{token}/items/{itemId}/download-link',
  'coffres.memberUpload': 'POST /v1/coffre-access/{token}/items',
  'coffres.openDownload': 'GET /v1/coffre-downloads/{token}',
  'coffres.archive': 'GET /v1/coffres/{id}/archive',
  'coffres.memberArchiveLink': 'POST /v1/coffre-access/{token}/archive-link',
  'coffres.openArchive': 'GET /v1/coffre-archives/{token}',
  'transfers.archive': 'GET /v1/transfers/{id}/archive',
  'shares.archiveLink': 'POST /v1/shares/{code}/archive-link',
  'shares.openArchive': 'GET /v1/archives/{token}',
  'collections.sharedArchiveLink': 'POST /v1/shared-collections/{code}/archive-link',

  'legal.documents': 'GET /v1/legal/documents',
  'legal.document': 'GET /v1/legal/documents/{slug}',
  'legal.accept': 'POST /v1/legal/acceptances',

  'gdpr.acceptances': 'GET /v1/gdpr/acceptances',
  'gdpr.createExport': 'POST /v1/gdpr/exports',
  'gdpr.getExport': 'GET /v1/gdpr/exports/{id}',
  'gdpr.latestExport': 'GET /v1/gdpr/export',
  'gdpr.download': 'GET /v1/gdpr/export-downloads/{token}',
} as const satisfies Record<string, DocumentedOperation>;

export type RouteName = keyof typeof ROUTES;

/** Documented operations the SDK leaves out on purpose, with the reason. */
export const EXCLUDED_OPERATIONS: Partial<Record<DocumentedOperation, string>> = {
  'GET /v1/health': 'an operator probe of the service and its dependencies, not part of a client workflow',
};

/** Splits a table entry into its method and a path with `{name}` parameters filled in (URL-encoded). */
export function resolveRoute(name: RouteName, params: Record<string, string> = {}) {
  const [method, template] = ROUTES[name].split(' ') as [string, string];
  const path = template.replace(/\{(\w+)\}/g, (_match, key: string) => {
    const value: unknown = params[key];
    // An empty or missing id would name another route (`/v1/transfers/` is the list).
    if (typeof value !== 'string' || value === '') {
      throw new InvalidArgumentError(key, `${name} needs a non-empty ${key} (a string); got ${describe(value)}`);
    }
    return encodeURIComponent(value);
  });
  return { method: method as 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path };
}
