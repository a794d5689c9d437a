import type { Request, ResponseToolkit } from '@hapi/hapi';
import { requireScopeOfRuleWrite } from '../../../lib/rules/service.ts';
import { validationFailAction } from '../../errors.ts';
import { callerOf } from '../../types.ts';

/**
 * The failAction of the rule writes: a key that may not touch rules calling a
 * URL hears 403 scope_missing before anything about the body (docs/rules.md),
 * as it does when the body is valid; only then is the body's fault named.
 */
export async function scopeBeforeBody(request: Request, h: ResponseToolkit, error?: Error): Promise<never> {
  const source = (error as { output?: { payload?: { validation?: { source?: string } } } } | undefined)?.output?.payload
    ?.validation?.source;
  if (source === 'payload') {
    const body: unknown = request.payload;
    const actionType = typeof body === 'object' && body !== null ? Reflect.get(body, 'action_type') : undefined;
    const ruleId = typeof request.params.id === 'string' ? request.params.id : null;
    await requireScopeOfRuleWrite(request.server.app.services, callerOf(request), ruleId, actionType);
  }
  return validationFailAction(request, h, error);
}
