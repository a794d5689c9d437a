import type { CommonQueryMethods } from 'slonik';
import { type RunRuleInput, ruleRunWorkflowId, runRule } from '../../workflows/runRule.ts';
import type { DispatchableEvent } from '../db/queries/events.ts';
import { createRuleQueries } from '../db/queries/rules.ts';
import { createTransferQueries } from '../db/queries/transfers.ts';
import { RULE_TRIGGERS } from '../events/catalog.ts';
import type { PlannedRun } from '../events/dispatcher.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import { factsOf, needsFileCount, rulesToRun } from './match.ts';

const triggers: ReadonlySet<string> = new Set(RULE_TRIGGERS);

export { ruleRunWorkflowId };

/**
 * The rule runs a batch of events sets off, for the dispatcher: one query for
 * the candidate rules, one for file counts when a `min_files` condition needs
 * them, and one `runRule` workflow per (rule, event) that matches.
 */
export async function planRuleRuns(
  db: CommonQueryMethods,
  events: readonly DispatchableEvent[],
): Promise<PlannedRun[]> {
  const candidates = events.filter((event) => triggers.has(event.type));
  if (candidates.length === 0) return [];
  const rules = await createRuleQueries(db).findEnabledForTriggers(
    [...new Set(candidates.map((event) => event.workspace_id))],
    [...new Set(candidates.map((event) => event.type))],
  );
  if (rules.length === 0) return [];

  const rulesOf = (event: DispatchableEvent) =>
    rules.filter(
      (rule) =>
        rule.workspace_id === event.workspace_id &&
        rule.environment === event.environment &&
        rule.trigger_event === event.type,
    );
  const transferIdOf = (event: DispatchableEvent) => {
    const id = (event.data.transfer as { id?: unknown } | undefined)?.id;
    return typeof id === 'string' ? id : null;
  };
  const countsNeeded = candidates
    .filter((event) => needsFileCount(rulesOf(event)))
    .map(transferIdOf)
    .filter((id): id is string => id !== null);
  const fileCounts = await createTransferQueries(db).countFiles([...new Set(countsNeeded)]);

  return candidates.flatMap((event) => {
    const transferId = transferIdOf(event);
    const facts = factsOf(event, transferId === null ? null : (fileCounts.get(transferId) ?? null));
    return rulesToRun(rulesOf(event), event, facts).map((rule) => {
      const input: RunRuleInput = { ruleId: rule.id, eventId: event.id };
      return {
        workflow: runRule,
        workflowId: ruleRunWorkflowId(rule.id, event.id),
        args: [input],
        labels: workflowLabels({ workspaceId: event.workspace_id, environment: event.environment }, 'rule', rule.id),
      };
    });
  });
}
