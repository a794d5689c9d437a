import { seal } from '../crypto/secrets.ts';
import { createWebhookQueries, type WebhookRow } from '../db/queries/webhooks.ts';
import { DomainError, notFound } from '../errors.ts';
import { isEventType } from '../events/catalog.ts';
import { checkWebhookUrl } from '../net/ssrf.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { generateWebhookSecret } from './signature.ts';

export const MAX_WEBHOOKS = 25;
export const DEFAULT_EVENTS = ['transfer.downloaded'];
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function presentWebhook(row: WebhookRow) {
  return {
    id: row.id,
    object: 'webhook' as const,
    name: row.name,
    description: row.description,
    url: row.url,
    events: row.events,
    is_active: row.is_active,
    success_count: row.success_count,
    failure_count: row.failure_count,
    last_triggered_at: row.last_triggered_at,
    last_status: row.last_status,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at,
  };
}

/** A target must be a URL Valise may call: https, no credentials, not a private or metadata address. */
function checkUrl(services: Services, url: string): string {
  const check = checkWebhookUrl(url, { allowPrivate: services.config.webhooks.allowPrivateTargets });
  if (!check.ok)
    throw new DomainError('validation_error', `This URL cannot receive webhooks: ${check.message}`, { param: 'url' });
  return check.url.toString();
}

function checkEvents(events: string[]): string[] {
  const unknown = events.filter((type) => type !== '*' && !isEventType(type));
  if (unknown.length > 0) {
    throw new DomainError(
      'validation_error',
      `Unknown event types: ${unknown.join(', ')}. See GET /v1/webhooks/events.`,
      {
        param: 'events',
      },
    );
  }
  return [...new Set(events)];
}

export type CreateWebhookInput = {
  url: string;
  events?: string[] | undefined;
  name?: string | undefined;
  description?: string | undefined;
};

export async function createWebhook(services: Services, caller: Caller, input: CreateWebhookInput) {
  const url = checkUrl(services, input.url);
  const events = checkEvents(input.events ?? DEFAULT_EVENTS);
  const secret = generateWebhookSecret();
  const row = await services.db.transaction(async (tx) => {
    const hooks = createWebhookQueries(tx);
    await hooks.lockTenant(tenantOf(caller));
    if ((await hooks.count(tenantOf(caller))) >= MAX_WEBHOOKS) {
      throw new DomainError(
        'validation_error',
        `A workspace may have at most ${MAX_WEBHOOKS} webhooks per environment.`,
        {
          param: 'url',
        },
      );
    }
    return hooks.insert(tenantOf(caller), {
      name: input.name ?? '',
      description: input.description ?? null,
      url,
      events,
      secretSealed: seal(services.keys.seal, secret),
    });
  });
  return { ...presentWebhook(row), secret };
}

export async function listWebhooks(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('webhooks', {}, page);
  const rows = await createWebhookQueries(services.db).list(tenantOf(caller), window);
  return services.paginator.close('webhooks', {}, page, rows, presentWebhook);
}

export type UpdateWebhookInput = {
  id: string;
  url?: string | undefined;
  events?: string[] | undefined;
  name?: string | undefined;
  description?: string | null | undefined;
  is_active?: boolean | undefined;
};

export async function updateWebhook(services: Services, caller: Caller, input: UpdateWebhookInput) {
  const hooks = createWebhookQueries(services.db);
  if (!(await hooks.find(tenantOf(caller), input.id))) throw notFound('webhook');
  await hooks.update(input.id, {
    url: input.url === undefined ? undefined : checkUrl(services, input.url),
    events: input.events === undefined ? undefined : checkEvents(input.events),
    name: input.name,
    description: input.description,
    isActive: input.is_active,
  });
  const row = await hooks.find(tenantOf(caller), input.id);
  if (!row) throw notFound('webhook');
  return presentWebhook(row);
}

export async function deleteWebhook(services: Services, caller: Caller, id: string) {
  const hooks = createWebhookQueries(services.db);
  if (!(await hooks.find(tenantOf(caller), id))) throw notFound('webhook');
  await hooks.remove(id);
  return { id, object: 'webhook' as const, deleted: true as const };
}

/** A new secret, returned once; the old one keeps signing beside it for 24 hours. */
export async function rotateWebhookSecret(services: Services, caller: Caller, id: string) {
  const hooks = createWebhookQueries(services.db);
  if (!(await hooks.find(tenantOf(caller), id))) throw notFound('webhook');
  const secret = generateWebhookSecret();
  const previousUntil = new Date(Date.now() + ROTATION_OVERLAP_MS);
  await hooks.rotateSecret(id, seal(services.keys.seal, secret), previousUntil);
  const row = await hooks.find(tenantOf(caller), id);
  if (!row) throw notFound('webhook');
  return { ...presentWebhook(row), secret, previous_secret_expires_at: previousUntil };
}
