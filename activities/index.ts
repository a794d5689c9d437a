import type { WorkerResources } from '../lib/composition.ts';
import { createApiKeyActivities } from './api-keys.ts';
import { createCoffreActivities } from './coffres.ts';
import { createGdprActivities } from './gdpr.ts';
import { createIntakeActivities } from './intakes.ts';
import { createMasterKeyActivities } from './master-keys.ts';
import { createRetentionActivities } from './retention.ts';
import { createRuleActivities } from './rules.ts';
import { createTransferActivities } from './transfers.ts';
import { createWebhookActivities } from './webhooks.ts';

// Every family's activities, listed once, and merged into the one map a worker registers. Temporal
// knows an activity by its name alone: two families defining the same name would have one silently
// run for the other's workflow, so the merge refuses it and the worker does not start.

export type ActivityResources = Pick<
  WorkerResources,
  'config' | 'db' | 'objects' | 'keyring' | 'scanner' | 'scanSlots' | 'mailer' | 'sealKey'
>;

/** Each family's activities, by family. */
export function activitiesByFamily(resources: ActivityResources) {
  return {
    'api-keys': createApiKeyActivities(resources),
    transfers: createTransferActivities(resources),
    intakes: createIntakeActivities(resources),
    webhooks: createWebhookActivities(resources),
    rules: createRuleActivities(resources),
    coffres: createCoffreActivities(resources),
    retention: createRetentionActivities(resources),
    gdpr: createGdprActivities(resources),
    'master-keys': createMasterKeyActivities(resources),
  };
}

type UnionToIntersection<U> = (U extends unknown ? (union: U) => void : never) extends (all: infer I) => void
  ? I
  : never;

/** One map of every activity; throws, naming both families, when two define the same name. */
export function mergeActivities<ByFamily extends Record<string, Record<string, unknown>>>(
  byFamily: ByFamily,
): UnionToIntersection<ByFamily[keyof ByFamily]> {
  const merged: Record<string, unknown> = {};
  const definedBy = new Map<string, string>();
  for (const [family, activities] of Object.entries(byFamily)) {
    for (const [name, activity] of Object.entries(activities)) {
      const other = definedBy.get(name);
      if (other) throw new Error(`the activity ${name} is defined by both ${other} and ${family}`);
      definedBy.set(name, family);
      merged[name] = activity;
    }
  }
  return merged as UnionToIntersection<ByFamily[keyof ByFamily]>;
}

/** What a worker registers. */
export function createActivities(resources: ActivityResources) {
  return mergeActivities(activitiesByFamily(resources));
}
