import { ApplicationFailure } from '@temporalio/activity';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../lib/config.ts';
import { unseal } from '../lib/crypto/secrets.ts';
import { createAuditQueries } from '../lib/db/queries/audit.ts';
import { createEventQueries, type DispatchableEvent } from '../lib/db/queries/events.ts';
import { createRuleQueries, type RuleRow } from '../lib/db/queries/rules.ts';
import { createTransferQueries, type TransferRow } from '../lib/db/queries/transfers.ts';
import { createWorkspaceQueries } from '../lib/db/queries/workspaces.ts';
import { transferEventView } from '../lib/events/views.ts';
import type { Mailer } from '../lib/mail/mailer.ts';
import { ruleMail } from '../lib/mail/templates.ts';
import { checkActionConfig, checkTargets, extensionHours, isActionType } from '../lib/rules/actions.ts';
import { describeEvent, fillIn, placeholders } from '../lib/rules/describe.ts';
import type { RuleExecutionStatus } from '../lib/rules/vocabulary.ts';
import { limitsFor } from '../lib/transfers/limits.ts';
import { shareUrl } from '../lib/transfers/present.ts';
import { envelopeOf } from '../lib/webhooks/outgoing.ts';
import { postJson } from '../lib/webhooks/post.ts';
import { deliveryHeaders } from '../lib/webhooks/signature.ts';

export type RuleActivityDeps = { config: Config; db: DatabasePool; sealKey: Buffer; mailer: Mailer };

export type RuleRunRef = { ruleId: string; eventId: string };

/** What an action did that the workflow must follow up: a new expiry to signal to the transfer's workflow. */
export type ActionOutcome = { extended?: { transferId: string; expiresAt: string } };

const failNow = (message: string, type: string) => ApplicationFailure.nonRetryable(message, type);

// Each action is idempotent, so Temporal may retry any of them: HTTP and mail
// repeat at most (receivers deduplicate by `webhook-id`), tags are set
// operations, archiving and extending happen once per (rule, event) because
// they check the event that caused them before changing anything.
export function createRuleActivities(deps: RuleActivityDeps) {
  const { config, db } = deps;

  async function load(ref: RuleRunRef): Promise<{ rule: RuleRow; event: DispatchableEvent }> {
    const [rule, event] = await Promise.all([
      createRuleQueries(db).findById(ref.ruleId),
      createEventQueries(db).find(ref.eventId),
    ]);
    if (!rule) throw failNow(`rule ${ref.ruleId} was deleted`, 'RuleDeleted');
    if (!event) throw failNow(`event ${ref.eventId} no longer exists`, 'EventDeleted');
    return { rule, event };
  }

  async function transferOf(
    event: DispatchableEvent,
    rule: RuleRow,
    conn: CommonQueryMethods = db,
  ): Promise<TransferRow> {
    const id = (event.data.transfer as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string') throw failNow(`${event.type} is not about a transfer`, 'NoTransfer');
    const transfer = await createTransferQueries(conn).findForUpdate(
      { workspaceId: rule.workspace_id, environment: rule.environment },
      id,
    );
    if (!transfer) throw failNow(`transfer ${id} no longer exists`, 'NoTransfer');
    return transfer;
  }

  /** Events an action causes carry the chain of rules behind them, so none of those rules runs again on them. */
  const causedBy = (rule: RuleRow, event: DispatchableEvent) => ({
    causedByRules: [...event.caused_by_rules, rule.id],
  });

  async function post(rule: RuleRow, url: string, body: string, headers: Record<string, string>) {
    const result = await postJson({
      url,
      body,
      headers,
      timeoutMs: config.webhooks.timeoutMs,
      allowPrivate: config.webhooks.allowPrivateTargets,
      userAgent: config.webhooks.userAgent,
      hosts: config.webhooks.hosts,
    });
    // Thrown, so Temporal retries it on the action's schedule; the last message is the execution's error.
    if (!result.ok) throw new Error(`${rule.action_type} to ${url}: ${result.error}`);
  }

  async function mail(rule: RuleRow, event: DispatchableEvent, to: string) {
    const transfer = event.data.transfer as { short_code?: unknown } | undefined;
    const link = typeof transfer?.short_code === 'string' ? shareUrl(config, transfer.short_code) : null;
    const values = placeholders(event, link);
    const actionConfig = rule.action_config as { subject?: string; body?: string };
    await deps.mailer.send(
      ruleMail({
        to,
        ruleName: rule.name,
        summary: describeEvent(event),
        subject: actionConfig.subject ? fillIn(actionConfig.subject, values) : undefined,
        body: actionConfig.body ? fillIn(actionConfig.body, values) : undefined,
        shareUrl: link,
      }),
    );
  }

  const actions: Record<string, (rule: RuleRow, event: DispatchableEvent) => Promise<ActionOutcome>> = {
    async webhook(rule, event) {
      const url = String(rule.action_config.url);
      if (!rule.secret_sealed) throw failNow('this webhook rule has no signing secret', 'NoSecret');
      const body = envelopeOf(event);
      const headers = await deliveryHeaders({
        id: event.id,
        timestamp: Math.floor(Date.now() / 1000),
        payload: body,
        secrets: [unseal(deps.sealKey, rule.secret_sealed)],
      });
      await post(rule, url, body, { ...headers });
      return {};
    },

    async slack_notify(rule, event) {
      const transfer = event.data.transfer as { short_code?: unknown } | undefined;
      const link = typeof transfer?.short_code === 'string' ? shareUrl(config, transfer.short_code) : null;
      const text = `${describeEvent(event)}${link ? ` <${link}|Open>` : ''} — rule “${rule.name}”`;
      await post(rule, String(rule.action_config.webhook_url), JSON.stringify({ text }), {
        'content-type': 'application/json',
      });
      return {};
    },

    async email_recipient(rule, event) {
      const transfer = await transferOf(event, rule);
      if (!transfer.recipient) throw failNow('the transfer has no recipient to mail', 'NoRecipient');
      await mail(rule, event, transfer.recipient);
      return {};
    },

    async email_workspace(rule, event) {
      const owner = await createWorkspaceQueries(db).findOwner(rule.workspace_id);
      if (!owner) throw failNow('the workspace has no owner to mail', 'NoOwner');
      await mail(rule, event, owner.email);
      return {};
    },

    async tag_transfer(rule, event) {
      const transfer = await transferOf(event, rule);
      await createTransferQueries(db).retag(transfer.id, String(rule.action_config.tag), 'add');
      return {};
    },

    async untag_transfer(rule, event) {
      const transfer = await transferOf(event, rule);
      await createTransferQueries(db).retag(transfer.id, String(rule.action_config.tag), 'remove');
      return {};
    },

    async extend_expiry(rule, event) {
      return db.transaction(async (tx) => {
        const events = createEventQueries(tx);
        const transfer = await transferOf(event, rule, tx);
        // Ran already (the activity is being retried): signal the expiry it set.
        const done = await events.findCausedBy('transfer.expiry_extended', rule.id, event.id);
        if (done) return { extended: { transferId: transfer.id, expiresAt: transfer.expires_at.toISOString() } };
        if (transfer.status === 'expired' || transfer.status === 'deleted') {
          throw failNow(`the transfer is ${transfer.status}: there is nothing to extend`, 'TransferEnded');
        }
        const ceiling =
          transfer.created_at.getTime() + limitsFor(transfer.environment, config).maxExpiryHours * 3_600_000;
        const previous = transfer.expires_at;
        const expiresAt = new Date(
          Math.max(
            previous.getTime(),
            Math.min(ceiling, previous.getTime() + extensionHours(rule.action_config) * 3_600_000),
          ),
        );
        const queries = createTransferQueries(tx);
        await queries.extendExpiry(transfer.id, expiresAt);
        const extended = { ...transfer, expires_at: expiresAt };
        await events.record(
          tenantOf(rule),
          'transfer.expiry_extended',
          {
            transfer: transferEventView(extended),
            previous_expires_at: previous.toISOString(),
            rule_id: rule.id,
            cause_event_id: event.id,
          },
          causedBy(rule, event),
        );
        await auditRule(tx, rule, 'transfer.extend_expiry', transfer.id, {
          previous_expires_at: previous.toISOString(),
          expires_at: expiresAt.toISOString(),
        });
        return { extended: { transferId: transfer.id, expiresAt: expiresAt.toISOString() } };
      });
    },

    async archive_transfer(rule, event) {
      await db.transaction(async (tx) => {
        const transfer = await transferOf(event, rule, tx);
        const archived = await createTransferQueries(tx).archive(transfer.id);
        if (!archived) return; // archived before, by this run or another rule
        await createEventQueries(tx).record(
          tenantOf(rule),
          'transfer.archived',
          { transfer: transferEventView(archived), rule_id: rule.id, cause_event_id: event.id },
          causedBy(rule, event),
        );
        await auditRule(tx, rule, 'transfer.archive', transfer.id, {});
      });
      return {};
    },
  };
  actions.trigger_webhook = actions.webhook as (typeof actions)['webhook'];

  return {
    /** Opens the (rule, event) execution; null when it already finished or the rule was deleted or disabled. */
    async startRuleRun(ref: RuleRunRef): Promise<{ executionId: string } | null> {
      const rule = await createRuleQueries(db).findById(ref.ruleId);
      const event = await createEventQueries(db).find(ref.eventId);
      if (!rule || !event || !rule.is_enabled) return null;
      const execution = await createRuleQueries(db).startExecution(rule, event);
      return execution ? { executionId: execution.id } : null;
    },

    async performRuleAction(ref: RuleRunRef): Promise<ActionOutcome> {
      const { rule, event } = await load(ref);
      const action = actions[rule.action_type];
      if (!action || !isActionType(rule.action_type)) {
        throw failNow(`unknown action ${rule.action_type}`, 'UnknownAction');
      }
      // The stored config is checked again, as the API checks a new one: a row
      // written around the API (an address on a mail action, a URL the guard now
      // refuses) fails the run at once instead of being acted on.
      let actionConfig: Record<string, unknown>;
      try {
        actionConfig = checkTargets(rule.action_type, checkActionConfig(rule.action_type, rule.action_config), {
          allowPrivate: config.webhooks.allowPrivateTargets,
        });
      } catch (error) {
        throw failNow(`the rule's action_config is refused: ${(error as Error).message}`, 'InvalidRule');
      }
      return action({ ...rule, action_config: actionConfig }, event);
    },

    async finishRuleRun(input: {
      executionId: string;
      status: Exclude<RuleExecutionStatus, 'running'>;
      error: string | null;
      durationMs: number;
    }): Promise<void> {
      await createRuleQueries(db).finishExecution(input.executionId, input);
    },
  };
}

const tenantOf = (rule: RuleRow) => ({ workspaceId: rule.workspace_id, environment: rule.environment });

async function auditRule(
  tx: CommonQueryMethods,
  rule: RuleRow,
  action: string,
  transferId: string,
  metadata: Record<string, unknown>,
) {
  await createAuditQueries(tx).insertSystem({
    ...tenantOf(rule),
    action,
    resourceType: 'transfer',
    resourceId: transferId,
    metadata: { ...metadata, rule_id: rule.id },
  });
}
