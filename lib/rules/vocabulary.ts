// The rules family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/** What a rule does when it matches (spec: Automation rules, action_type). */
export const RULE_ACTION_TYPES = [
  'webhook',
  'trigger_webhook',
  'slack_notify',
  'email_recipient',
  'email_workspace',
  'tag_transfer',
  'untag_transfer',
  'extend_expiry',
  'archive_transfer',
] as const;
export type RuleActionType = (typeof RULE_ACTION_TYPES)[number];

/** One run of a rule's action. */
export const RULE_EXECUTION_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;
export type RuleExecutionStatus = (typeof RULE_EXECUTION_STATUSES)[number];
