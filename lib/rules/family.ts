import type { Family } from '../family.ts';

export const rulesFamily = {
  name: 'rules',
  openapi: { tag: 'rules', description: 'Automation rules and their executions.' },
  tables: {
    // Conditions may name a recipient's address, and actions the addresses they mail.
    rules: {
      scope: { kind: 'tenant' },
      personal: ['trigger_conditions', 'action_config'],
      subjects: { emails: ['trigger_conditions', 'action_config'] },
    },
    rule_executions: { scope: { kind: 'tenant' }, personal: [] },
  },
} satisfies Family;
