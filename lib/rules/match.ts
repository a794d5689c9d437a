import type { RuleRow } from '../db/queries/rules.ts';
import type { TriggerConditions } from './service.ts';

// Which rules an event sets off (docs/rules.md, "Evaluation"). Pure: the
// dispatcher gathers the facts, this decides.

/** What conditions are matched against: the transfer the event is about, as the event saw it. */
export type EventFacts = {
  encryption_mode: string | null;
  status: string | null;
  files_count: number | null;
  recipient_email: string | null;
  country_code: string | null;
};

/**
 * A chain this long means rules keep setting each other off through their
 * actions' events; past it nothing more runs. (A rule is never retriggered by
 * an event its own action caused, however short the chain.)
 */
export const MAX_RULE_CHAIN = 5;

type EventLike = { type: string; data: Record<string, unknown>; caused_by_rules: readonly string[] };

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Facts from the event's `data.transfer` (and `country_code`); `filesCount` when the payload lacks it. */
export function factsOf(event: EventLike, filesCount: number | null): EventFacts {
  const transfer = (event.data.transfer ?? {}) as Record<string, unknown>;
  const recipient = text(transfer.recipient);
  const country = text(event.data.country_code);
  return {
    encryption_mode: text(transfer.encryption_mode),
    status: text(transfer.status),
    files_count: typeof transfer.files_count === 'number' ? transfer.files_count : filesCount,
    recipient_email: recipient?.toLowerCase() ?? null,
    country_code: country?.toUpperCase() ?? null,
  };
}

/** Every given condition must hold; a fact the event does not carry never matches. */
export function conditionsHold(conditions: TriggerConditions | null, facts: EventFacts): boolean {
  if (!conditions) return true;
  if (conditions.encryption_mode !== undefined && conditions.encryption_mode !== facts.encryption_mode) return false;
  if (conditions.status !== undefined && conditions.status !== facts.status) return false;
  if (conditions.min_files !== undefined && (facts.files_count ?? 0) < conditions.min_files) return false;
  if (conditions.recipient_email !== undefined && conditions.recipient_email.toLowerCase() !== facts.recipient_email) {
    return false;
  }
  if (conditions.country_code !== undefined && conditions.country_code.toUpperCase() !== facts.country_code) {
    return false;
  }
  return true;
}

/** The rules (already filtered to the event's tenant and type, enabled) that this event runs. */
export function rulesToRun(rules: readonly RuleRow[], event: EventLike, facts: EventFacts): RuleRow[] {
  if (event.caused_by_rules.length >= MAX_RULE_CHAIN) return [];
  return rules.filter(
    (rule) =>
      !event.caused_by_rules.includes(rule.id) &&
      conditionsHold(rule.trigger_conditions as TriggerConditions | null, facts),
  );
}

/** Whether any of these rules needs the transfer's file count. */
export const needsFileCount = (rules: readonly RuleRow[]) =>
  rules.some((rule) => (rule.trigger_conditions as TriggerConditions | null)?.min_files !== undefined);
