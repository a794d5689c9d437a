import type { Family } from '../family.ts';
import { RULE_ACTION_TYPES, RULE_EXECUTION_STATUSES } from './vocabulary.ts';

export const rulesFamily = {
  name: 'rules',
  openapi: { tag: 'rules', description: 'Automation rules and their executions.' },
  tables: {
    // Conditions may name a recipient's address, and actions the addresses they mail.
    rules: {
      scope: { kind: 'tenant' },
      personal: ['trigger_conditions', 'action_config'],
      subjects: { emails: ['trigger_conditions', 'action_config'] },
      vocabulary: { action_type: RULE_ACTION_TYPES },
    },
    rule_executions: { scope: { kind: 'tenant' }, personal: [], vocabulary: { status: RULE_EXECUTION_STATUSES } },
  },
} satisfies Family;
