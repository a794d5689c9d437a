import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  CreatedRule,
  CreateRuleParams,
  DeletedRule,
  ListRulesParams,
  Rule,
  RuleExecution,
  UpdateRuleParams,
} from '../types.ts';
import { Resource } from './resource.ts';

/** Automation rules: an action run when an event matches (docs/rules.md). */
export class Rules extends Resource {
  list(params: ListRulesParams = {}, options?: RequestOptions): PageRequest<Rule> {
    return this.paged('rules.list', { query: params, options });
  }

  create(params: CreateRuleParams, options?: RequestOptions): Promise<CreatedRule> {
    return this.call('rules.create', { body: params, options });
  }

  get(id: string, options?: RequestOptions): Promise<Rule> {
    return this.call('rules.get', { params: { id }, options });
  }

  update(id: string, params: UpdateRuleParams, options?: RequestOptions): Promise<Rule> {
    return this.call('rules.update', { params: { id }, body: params, options });
  }

  delete(id: string, options?: RequestOptions): Promise<DeletedRule> {
    return this.call('rules.delete', { params: { id }, options });
  }

  executions(id: string, params: { limit?: number } = {}, options?: RequestOptions): PageRequest<RuleExecution> {
    return this.paged('rules.executions', { params: { id }, query: params, options });
  }
}
