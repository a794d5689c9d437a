import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';

// The generic lifecycles call a family's steps by name, `<family>.<step>`: the names
// activities/lifecycles.ts (`lifecycleActivities`) registers them under.

/** The family's activities of type `Steps`, proxied with `options`. */
export function familyActivities<Steps extends object>(family: string, options: ActivityOptions): Steps {
  const byName = proxyActivities<Record<string, (...args: unknown[]) => Promise<unknown>>>(options);
  return new Proxy({} as Steps, {
    get: (_target, step) => byName[`${family}.${String(step)}`],
  });
}
