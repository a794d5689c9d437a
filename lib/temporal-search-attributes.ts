import type { Client, WorkflowOptions } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
// Not re-exported by the package's index: the proto enum of a search attribute type.
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import type { Tenant } from './tenancy.ts';

// What an operator finds workflows by in the Temporal UI and CLI (docs/operations.md, "Finding a
// workspace's workflows"): every workflow Valise starts carries its workspace, its environment and
// the resource it acts for as custom search attributes, and a one-line summary. The keys are
// declared here once; scripts/temporal-search-attributes.ts registers them on a Temporal server
// (scripts/stack.sh runs it for both flavours), and each family's adapter (lib/<family>/temporal.ts)
// spreads `workflowLabels(...)` into its start options.

/**
 * What a workflow acts for, as ValiseResourceType says it: the resource an operator holds the id of
 * (a delivery's webhook, a run's rule, an invitation mail's vault member), so that
 * `ValiseResourceId = '<id>'` finds every workflow of that resource.
 */
export const WORKFLOW_RESOURCE_TYPES = [
  'transfer',
  'webhook',
  'rule',
  'intake',
  'intake_document',
  'coffre',
  'coffre_item',
  'coffre_member',
  'api_key',
  'api_key_secret',
  'gdpr_export',
  'sandbox_purge',
  'master_key',
] as const;
export type WorkflowResourceType = (typeof WORKFLOW_RESOURCE_TYPES)[number];

/** The custom search attributes, all Keyword (exact match, as ids and names are searched). */
export const VALISE_SEARCH_ATTRIBUTES = {
  workspaceId: defineSearchAttributeKey('ValiseWorkspaceId', SearchAttributeType.KEYWORD),
  environment: defineSearchAttributeKey('ValiseEnvironment', SearchAttributeType.KEYWORD),
  resourceType: defineSearchAttributeKey('ValiseResourceType', SearchAttributeType.KEYWORD),
  resourceId: defineSearchAttributeKey('ValiseResourceId', SearchAttributeType.KEYWORD),
} as const;

/** The options every start of a Valise workflow carries: its search attributes and its summary. */
export type WorkflowLabels = Required<Pick<WorkflowOptions, 'typedSearchAttributes' | 'staticSummary'>>;

/**
 * The search attributes and summary of a workflow acting for `resource` of `tenant`; a workflow of
 * the deployment itself (the sandbox purge, a master-key rotation) has no tenant and carries only its resource.
 */
export function workflowLabels(tenant: Tenant | null, type: WorkflowResourceType, id: string): WorkflowLabels {
  const keys = VALISE_SEARCH_ATTRIBUTES;
  const resource = [
    { key: keys.resourceType, value: type },
    { key: keys.resourceId, value: id },
  ];
  if (tenant === null) return { typedSearchAttributes: resource, staticSummary: `${type} ${id}` };
  return {
    typedSearchAttributes: [
      { key: keys.workspaceId, value: tenant.workspaceId },
      { key: keys.environment, value: tenant.environment },
      ...resource,
    ],
    staticSummary: `${type} ${id} of workspace ${tenant.workspaceId} (${tenant.environment})`,
  };
}

/**
 * Registers on the server the attributes it does not know yet (a running dev server, the server
 * flavour's fresh databases, a production cluster): starts that carry an unknown attribute are
 * refused. Answers the names it added. Run by scripts/temporal-search-attributes.ts.
 */
export async function registerSearchAttributes(client: Client, namespace: string): Promise<string[]> {
  const known = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(VALISE_SEARCH_ATTRIBUTES).filter(
    (key) => !(key.name in known.customAttributes) && !(key.name in known.systemAttributes),
  );
  if (missing.length === 0) return [];
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type) as number]),
    ),
  });
  return missing.map((key) => key.name);
}
