import type { RouteOptions, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { z } from 'zod';
import { analyticsSummary } from '../../../lib/analytics/service.ts';
import { listAudit } from '../../../lib/audit/list.ts';
import { listItems } from '../../../lib/coffres/items.ts';
import { listCoffres } from '../../../lib/coffres/service.ts';
import { DomainError } from '../../../lib/errors.ts';
import { listDocuments } from '../../../lib/intakes/documents.ts';
import { listIntakes } from '../../../lib/intakes/service.ts';
import { INTAKE_DOCUMENT_STATUSES, INTAKE_STATUSES } from '../../../lib/intakes/vocabulary.ts';
import { MCP_TOOLS, type McpToolName } from '../../../lib/mcp/tools.ts';
import type { Services } from '../../../lib/services.ts';
import type { Caller } from '../../../lib/tenancy.ts';
import { createTransfer } from '../../../lib/transfers/create.ts';
import { getTransfer, listTransfers, revokeTransfer } from '../../../lib/transfers/manage.ts';
import { transferPhase } from '../../../lib/transfers/phase.ts';
import { blockedMessage, blockedReason } from '../../../lib/transfers/share.ts';
import { TRANSFER_STATUSES } from '../../../lib/vocabulary.ts';
import { analyticsSummaryRoute } from '../analytics/summary.ts';
import { listAuditRoute } from '../audit/list.ts';
import { itemsListRoute } from '../coffres/items-list.ts';
import { listRoute as listCoffresRoute } from '../coffres/list.ts';
import { documentsListRoute } from '../intakes/documents-list.ts';
import { listRoute as listIntakesRoute } from '../intakes/list.ts';
import { createRoute as createTransferRoute } from '../transfers/create.ts';
import { getRoute as getTransferRoute } from '../transfers/get.ts';
import { listRoute as listTransfersRoute } from '../transfers/list.ts';
import { revokeRoute as revokeTransferRoute } from '../transfers/revoke.ts';

// The tools of the hosted transport (docs/mcp.md, "Tools"), one per name of lib/mcp/tools.ts. Each is
// an API route seen by an MCP client: its arguments (a zod shape, which the client reads as the tool's
// JSON Schema) are checked again with that route's own joi schemas, so a name, a password, a limit or
// an id is held to exactly what the API holds it to, defaults and clamping included; it then calls
// the route's domain function as the token's caller. The route's scope is the tool's `required_scope`,
// checked when this module loads, so the two cannot drift.

type Context = { services: Services; caller: Caller };
type Ran = { result: unknown; resourceId: string | null };

export type ToolImplementation = {
  /** The route the tool is: its schemas validate, its scope is required. */
  route: ServerRoute;
  readOnly: boolean;
  input: z.ZodRawShape;
  run: (context: Context, args: Record<string, unknown>) => Promise<Ran>;
};

function tool<Shape extends z.ZodRawShape>(
  route: ServerRoute,
  readOnly: boolean,
  input: Shape,
  run: (context: Context, args: z.infer<z.ZodObject<Shape>>) => Promise<Ran>,
): ToolImplementation {
  return { route, readOnly, input, run: run as ToolImplementation['run'] };
}

/** The route's input as its joi schema lets it through (converted, defaulted), or the API's 400. */
async function validated<T>(route: ServerRoute, part: 'params' | 'query' | 'payload', value: object): Promise<T> {
  const schema: unknown = (route.options as RouteOptions).validate?.[part];
  if (!Joi.isSchema(schema)) throw new Error(`${route.path} has no ${part} schema`);
  const defined = Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined));
  try {
    return (await (schema as Joi.Schema).validateAsync(defined, { abortEarly: true })) as T;
  } catch (error) {
    if (!(error instanceof Joi.ValidationError)) throw error;
    const first = error.details[0];
    throw new DomainError('validation_error', first?.message.replaceAll('"', '`') ?? 'The arguments are not valid.', {
      param: first ? first.path.join('.') || null : null,
    });
  }
}

const page = {
  limit: z.number().int().optional().describe('Items per page, 1 to 100 (clamped); default 20.'),
  cursor: z.string().optional().describe("The previous page's `next_cursor`."),
};
const transferId = { transfer_id: z.string().describe('The transfer id (a uuid).') };

export const TOOL_IMPLEMENTATIONS: Record<McpToolName, ToolImplementation> = {
  list_transfers: tool(
    listTransfersRoute,
    true,
    {
      search: z.string().optional().describe('Matches the title, short code or recipient.'),
      status: z.enum(TRANSFER_STATUSES).optional(),
      ...page,
    },
    async ({ services, caller }, args) => {
      const query = await validated<Parameters<typeof listTransfers>[2]>(listTransfersRoute, 'query', args);
      return { result: await listTransfers(services, caller, query), resourceId: null };
    },
  ),

  create_transfer: tool(
    createTransferRoute,
    false,
    {
      files: z
        .array(
          z.object({
            name: z.string().describe('The file name, one path segment.'),
            size: z.number().int().min(0).describe('The size in bytes.'),
            mime_type: z.string().optional(),
          }),
        )
        .min(1),
      transfer_title: z.string().optional(),
      expires_in_hours: z.number().positive().optional(),
      max_downloads: z.number().int().min(1).optional(),
      password: z.string().optional(),
      recipient: z.string().optional().describe('An e-mail address mailed a personal link once the files are in.'),
    },
    async ({ services, caller }, args) => {
      const input = await validated<Parameters<typeof createTransfer>[2]>(createTransferRoute, 'payload', args);
      const created = await createTransfer(services, caller, input);
      return { result: created, resourceId: created.transfer.id };
    },
  ),

  get_transfer_status: tool(getTransferRoute, true, transferId, async ({ services, caller }, args) => {
    const { id } = await validated<{ id: string }>(getTransferRoute, 'params', { id: args.transfer_id });
    const transfer = await getTransfer(services, caller, id);
    const blocked = blockedReason(transfer);
    return {
      result: {
        object: 'transfer_status',
        transfer_id: transfer.id,
        status: transfer.status,
        phase: transferPhase(transfer),
        files: transfer.files.map(({ id: fileId, name, size, upload_state, bytes_received, scan_status }) => ({
          id: fileId,
          name,
          size,
          upload_state,
          bytes_received,
          scan_status,
        })),
        downloads: {
          total: transfer.total_downloads,
          max: transfer.max_downloads,
          downloadable: blocked === null,
          blocked_reason: blocked,
          message: blocked === null ? null : blockedMessage(blocked),
        },
        expires_at: transfer.expires_at,
        share_url: transfer.share_url,
      },
      resourceId: transfer.id,
    };
  }),

  revoke_transfer: tool(revokeTransferRoute, false, transferId, async ({ services, caller }, args) => {
    const { id } = await validated<{ id: string }>(revokeTransferRoute, 'params', { id: args.transfer_id });
    return { result: await revokeTransfer(services, caller, id), resourceId: id };
  }),

  list_intakes: tool(
    listIntakesRoute,
    true,
    { status: z.enum(INTAKE_STATUSES).optional(), ...page },
    async ({ services, caller }, args) => {
      const query = await validated<Parameters<typeof listIntakes>[2]>(listIntakesRoute, 'query', args);
      return { result: await listIntakes(services, caller, query), resourceId: null };
    },
  ),

  list_intake_documents: tool(
    documentsListRoute,
    true,
    {
      intake_id: z.string().describe('The intake id (`in_…`).'),
      status: z.enum(INTAKE_DOCUMENT_STATUSES).optional(),
      ...page,
    },
    async ({ services, caller }, { intake_id, ...rest }) => {
      const { id } = await validated<{ id: string }>(documentsListRoute, 'params', { id: intake_id });
      const query = await validated<Parameters<typeof listDocuments>[3]>(documentsListRoute, 'query', rest);
      return { result: await listDocuments(services, caller, id, query), resourceId: id };
    },
  ),

  list_vaults: tool(listCoffresRoute, true, page, async ({ services, caller }, args) => {
    const query = await validated<Parameters<typeof listCoffres>[2]>(listCoffresRoute, 'query', args);
    return { result: await listCoffres(services, caller, query), resourceId: null };
  }),

  list_vault_items: tool(
    itemsListRoute,
    true,
    { vault_id: z.string().describe('The vault id (`cof_…`).'), ...page },
    async ({ services, caller }, { vault_id, ...rest }) => {
      const { id } = await validated<{ id: string }>(itemsListRoute, 'params', { id: vault_id });
      const query = await validated<Parameters<typeof listItems>[3]>(itemsListRoute, 'query', rest);
      return { result: await listItems(services, caller, id, query), resourceId: id };
    },
  ),

  search_audit_log: tool(
    listAuditRoute,
    true,
    {
      action: z.string().optional().describe('An exact action, such as `transfer.create`.'),
      actor_id: z.string().optional().describe('The member who acted (a uuid).'),
      resource_type: z.string().optional(),
      since: z.string().optional().describe('ISO 8601, inclusive.'),
      until: z.string().optional().describe('ISO 8601, exclusive.'),
      limit: z.number().int().optional().describe('Entries per page, 1 to 500 (clamped); default 20.'),
      cursor: page.cursor,
    },
    async ({ services, caller }, args) => {
      const query = await validated<Parameters<typeof listAudit>[2]>(listAuditRoute, 'query', args);
      return { result: await listAudit(services, caller, query), resourceId: null };
    },
  ),

  analytics_summary: tool(
    analyticsSummaryRoute,
    true,
    {
      since: z.string().optional().describe('ISO 8601, inclusive; default 30 days before `until`.'),
      until: z.string().optional().describe('ISO 8601, exclusive; default now.'),
      tz: z.string().optional().describe('The IANA time zone the days are cut in; default UTC.'),
    },
    async ({ services, caller }, args) => {
      const query = await validated<Parameters<typeof analyticsSummary>[2]>(analyticsSummaryRoute, 'query', args);
      return { result: await analyticsSummary(services, caller, query), resourceId: null };
    },
  ),
};

// Each tool's required scope is its route's: refuse to start with a catalog that says otherwise.
for (const declared of MCP_TOOLS) {
  const routeScope = (TOOL_IMPLEMENTATIONS[declared.name].route.options as RouteOptions).plugins?.valise?.scope;
  if (routeScope !== declared.requiredScope) {
    throw new Error(`MCP tool ${declared.name} requires ${declared.requiredScope}, its route ${routeScope}`);
  }
}
