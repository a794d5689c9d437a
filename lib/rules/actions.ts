import Joi from 'joi';
import { DomainError } from '../errors.ts';
import { checkWebhookUrl, type TargetPolicy } from '../net/ssrf.ts';
import { isOneOf } from '../vocabulary.ts';
import { RULE_ACTION_TYPES, type RuleActionType } from './vocabulary.ts';

// What a rule does when it matches (spec: Automation rules, action_type), and
// the `action_config` each action takes, written once as joi: the rule routes
// validate `action_config` with it, and lib/rules/service.ts and the worker
// check with it the configs the routes do not see whole (a PATCH merged with
// the stored rule, a stored config before it is acted on). The target guard of
// URL actions (lib/net/ssrf.ts) is a step of its own: it depends on
// configuration, and the worker applies it again at every call.

export const isActionType = (value: unknown): value is RuleActionType => isOneOf(RULE_ACTION_TYPES, value);

/** Actions that POST to a customer URL, signed like webhook deliveries with the rule's own `whsec_` secret. */
export const SIGNED_ACTIONS: readonly RuleActionType[] = ['webhook', 'trigger_webhook'];
export const usesSigningSecret = (actionType: string) => (SIGNED_ACTIONS as readonly string[]).includes(actionType);

/**
 * Actions that POST to a URL the rule names. They do what a webhook does, so a
 * rule with one is created, changed and deleted only by a key that also holds
 * this scope (docs/rules.md, "Scopes of actions").
 */
export const URL_ACTIONS: readonly RuleActionType[] = ['webhook', 'trigger_webhook', 'slack_notify'];
export const URL_ACTION_SCOPE = 'webhooks:manage';
export const callsUrl = (actionType: string) => (URL_ACTIONS as readonly string[]).includes(actionType);
/** The `action_config` members that hold the URL of a URL action. */
export const TARGET_MEMBERS = ['url', 'webhook_url'] as const;

/**
 * A target URL as a caller without URL_ACTION_SCOPE sees it: the scheme, host
 * and port, and a path of `***` whatever it was. Slack's and most receivers'
 * URLs carry their credential in the path or the query (docs/rules.md,
 * "Reading target URLs"), so nothing of either is shown, not even its length.
 */
export const MASKED_PATH = '/***';
export function maskTargetUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return MASKED_PATH;
  }
  return `${url.protocol}//${url.host}${MASKED_PATH}`;
}

/** The URLs written in free text (an execution's error), masked as maskTargetUrl does, trailing punctuation kept. */
export const maskUrlsIn = (text: string) =>
  text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+?(?=[:;,.)\]]*(?:\s|$|["'<>]))/gi, (url) => maskTargetUrl(url));

export const MAX_URL_LENGTH = 2048;
export const MAX_SUBJECT_LENGTH = 200;
export const MAX_BODY_LENGTH = 5000;
export const MAX_TAG_LENGTH = 64;
/** extend_expiry may add at most this much (hours + days together). */
export const MAX_EXTENSION_HOURS = 365 * 24;

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
const CONTROL_OR_LINE_BREAK = /[\u0000-\u001f\u007f]/;

/**
 * Free text of a config: trimmed, without NUL or other control characters
 * (tab and newlines are fine in a body), well-formed UTF-16. Empty after
 * trimming is dropped.
 */
const configText = (max: number, { singleLine = false } = {}) =>
  Joi.string()
    .trim()
    .empty('')
    .pattern(singleLine ? CONTROL_OR_LINE_BREAK : CONTROL, { invert: true, name: 'control characters' })
    .custom((value: string, helpers) => (value.isWellFormed() ? value : helpers.error('string.wellFormed')))
    .max(max)
    .messages({
      'string.pattern.invert.name': '{{#label}} must not contain control characters',
      'string.wellFormed': '{{#label}} is not valid Unicode text',
    });

/** The URL an action POSTs to; the target guard (checkTargets) judges where it leads. */
const targetUrl = Joi.string().max(MAX_URL_LENGTH);

const amount = Joi.number().strict().positive();

/** An error of a config's member (`action_config.<member>`), raised by a rule of the config object. */
const memberError = (helpers: Joi.CustomHelpers, code: string, member: string) =>
  helpers.error(code, {}, { ...helpers.state, path: [...(helpers.state.path ?? []), member] });

/**
 * A config object that takes `members` and refuses any other member, saying
 * what the action takes (and, for mail actions, why they take no address).
 * `required` members are checked after the others are refused, so that an
 * unknown member is named rather than a missing one (`{ "url": … }` for
 * slack_notify is refused for `url`).
 */
function config(members: Record<string, Joi.Schema>, { required = [] as string[], takes = '' } = {}) {
  const names = Object.keys(members).map((member) => `\`${member}\``);
  const said =
    takes || (names.length === 0 ? 'this action takes no members' : `this action takes only ${names.join(', ')}`);
  return Joi.object(members)
    .unknown(false)
    .custom((value: Record<string, unknown>, helpers) => {
      const missing = required.find((member) => value[member] === undefined);
      return missing === undefined ? value : memberError(helpers, 'any.required', missing);
    })
    .messages({ 'object.unknown': `{{#label}} is not allowed: ${said}.` });
}

const callConfig = config({ url: targetUrl }, { required: ['url'] });
const slackConfig = config({ webhook_url: targetUrl }, { required: ['webhook_url'] });
const mailConfig = config(
  { subject: configText(MAX_SUBJECT_LENGTH, { singleLine: true }), body: configText(MAX_BODY_LENGTH) },
  {
    takes:
      "mail actions take only `subject`, `body`, and no address: `email_recipient` mails the transfer's recipient, " +
      '`email_workspace` the workspace owner',
  },
);
const tagConfig = config({ tag: configText(MAX_TAG_LENGTH, { singleLine: true }) }, { required: ['tag'] });
/** `hours` and/or `days`, at least one, together at most MAX_EXTENSION_HOURS; an error names the member at fault. */
const extensionConfig = config({ hours: amount, days: amount })
  .custom((value: { hours?: number; days?: number }, helpers) => {
    if (value.hours === undefined && value.days === undefined) return memberError(helpers, 'extension.none', 'hours');
    if (extensionHours(value) > MAX_EXTENSION_HOURS) {
      return memberError(helpers, 'extension.total', value.days === undefined ? 'hours' : 'days');
    }
    return value;
  })
  .messages({
    'extension.none': 'Action `extend_expiry` needs `hours` or `days`, greater than 0.',
    'extension.total': `\`extend_expiry\` may add at most 365 days (${MAX_EXTENSION_HOURS} hours) in all.`,
  });

/** The `action_config` each action takes; any other member is refused. */
export const ACTION_CONFIGS: Readonly<Record<RuleActionType, Joi.ObjectSchema>> = {
  webhook: callConfig,
  trigger_webhook: callConfig,
  slack_notify: slackConfig,
  email_recipient: mailConfig,
  email_workspace: mailConfig,
  tag_transfer: tagConfig,
  untag_transfer: tagConfig,
  extend_expiry: extensionConfig,
  archive_transfer: config({}),
};

/** The action types of each distinct config, so that each config is one branch (and published once). */
const actionsByConfig = new Map<Joi.ObjectSchema, RuleActionType[]>();
for (const actionType of RULE_ACTION_TYPES) {
  const schema = ACTION_CONFIGS[actionType];
  actionsByConfig.set(schema, [...(actionsByConfig.get(schema) ?? []), actionType]);
}

/**
 * `action_config` as its sibling `action_type` takes it (any object when the
 * request has no `action_type`: a PATCH's config is then checked with the
 * stored action, by checkActionConfig).
 */
export const actionConfig = Joi.object()
  .unknown(true)
  .when('action_type', {
    switch: [...actionsByConfig].map(([schema, actionTypes]) => ({
      is: Joi.string()
        .valid(...actionTypes)
        .required(),
      // biome-ignore lint/suspicious/noThenProperty: joi's conditional takes `then`.
      then: schema,
    })),
  })
  .description(
    'Members depend on `action_type`: `url` (webhook, trigger_webhook), `webhook_url` (slack_notify), ' +
      '`subject`/`body` (email_*), `tag` (tag_transfer, untag_transfer), `hours`/`days` (extend_expiry), ' +
      'none (archive_transfer). Any other member is refused. Default `{}`.',
  );

const ruleAction = Joi.object<{ action_type: RuleActionType; action_config: Record<string, unknown> }>({
  action_type: Joi.string()
    .valid(...RULE_ACTION_TYPES)
    .required(),
  action_config: actionConfig.required(),
});

/**
 * Checks with ACTION_CONFIGS a config no route has checked with its action:
 * the default `{}` of a new rule, a PATCH's config merged with the stored
 * rule, a stored config the worker is about to act on. Returns the config
 * normalised, or throws validation_error naming the member at fault
 * (`action_config.<member>`), as the routes' validation does.
 */
export function checkActionConfig(
  actionType: RuleActionType,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const { error, value } = ruleAction.validate({ action_type: actionType, action_config: config });
  const first = error?.details[0];
  if (first) {
    throw new DomainError('validation_error', first.message.replaceAll('"', '`'), { param: first.path.join('.') });
  }
  return value.action_config;
}

/**
 * The members of a previous config that a new action type also takes: when a
 * PATCH changes `action_type` without sending `action_config`, these carry over
 * (webhook to trigger_webhook keeps `url`) and the rest is dropped.
 */
export function carryOverConfig(
  actionType: RuleActionType,
  previous: Record<string, unknown>,
): Record<string, unknown> {
  const members = Object.keys(ACTION_CONFIGS[actionType].describe().keys ?? {});
  return Object.fromEntries(Object.entries(previous).filter(([member]) => members.includes(member)));
}

/**
 * The target guard of URL actions (lib/net/ssrf.ts), as for webhooks: returns
 * the config with its URL in normal form, or throws validation_error
 * naming the member. Other actions' configs are returned as they are.
 */
export function checkTargets(
  actionType: RuleActionType,
  config: Record<string, unknown>,
  policy: TargetPolicy,
): Record<string, unknown> {
  const member = actionType === 'slack_notify' ? 'webhook_url' : 'url';
  if (!callsUrl(actionType) || typeof config[member] !== 'string') return config;
  const check = checkWebhookUrl(config[member], policy);
  if (!check.ok) {
    throw new DomainError('validation_error', `This URL cannot be called by a rule: ${check.message}.`, {
      param: `action_config.${member}`,
    });
  }
  return { ...config, [member]: check.url.toString() };
}

/** Hours an extend_expiry config adds. */
export function extensionHours(config: { hours?: unknown; days?: unknown }): number {
  const hours = typeof config.hours === 'number' ? config.hours : 0;
  const days = typeof config.days === 'number' ? config.days : 0;
  return hours + days * 24;
}
