import { DomainError } from '../errors.ts';
import { checkWebhookUrl } from '../net/ssrf.ts';

// What a rule does when it matches (spec: Automation rules, action_type), and
// the `action_config` each action takes. The API validates configs with
// normaliseActionConfig before storing them; the worker runs stored configs.

export const ACTION_TYPES = [
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
export type ActionType = (typeof ACTION_TYPES)[number];

const known: ReadonlySet<string> = new Set(ACTION_TYPES);
export function isActionType(value: unknown): value is ActionType {
  return typeof value === 'string' && known.has(value);
}

/** Actions that POST to a customer URL, signed like webhook deliveries with the rule's own `whsec_` secret. */
export const SIGNED_ACTIONS: readonly ActionType[] = ['webhook', 'trigger_webhook'];
export const usesSigningSecret = (actionType: string) => (SIGNED_ACTIONS as readonly string[]).includes(actionType);

/**
 * Actions that POST to a URL the rule names. They do what a webhook does, so a
 * rule with one is created, changed and deleted only by a key that also holds
 * this scope (docs/rules.md, "Scopes of actions").
 */
export const URL_ACTIONS: readonly ActionType[] = ['webhook', 'trigger_webhook', 'slack_notify'];
export const URL_ACTION_SCOPE = 'webhooks:manage';
export const callsUrl = (actionType: string) => (URL_ACTIONS as readonly string[]).includes(actionType);

/**
 * Mail actions. Their target is fixed by the action, never by the config:
 * `email_recipient` mails the transfer's own recipient, `email_workspace` the
 * workspace owner. A config holds no address.
 */
export const MAIL_ACTIONS: readonly ActionType[] = ['email_recipient', 'email_workspace'];
const MAIL_TARGETS =
  "mail actions take no address: `email_recipient` mails the transfer's recipient, `email_workspace` the workspace owner";

/** The members each action's config may have; any other member is refused. */
export const ACTION_CONFIG_MEMBERS: Readonly<Record<ActionType, readonly string[]>> = {
  webhook: ['url'],
  trigger_webhook: ['url'],
  slack_notify: ['webhook_url'],
  email_recipient: ['subject', 'body'],
  email_workspace: ['subject', 'body'],
  tag_transfer: ['tag'],
  untag_transfer: ['tag'],
  extend_expiry: ['hours', 'days'],
  archive_transfer: [],
};

export const MAX_URL_LENGTH = 2048;
export const MAX_SUBJECT_LENGTH = 200;
export const MAX_BODY_LENGTH = 5000;
export const MAX_TAG_LENGTH = 64;
/** extend_expiry may add at most this much (hours + days together). */
export const MAX_EXTENSION_HOURS = 365 * 24;

export type TargetOptions = { allowPrivateTargets: boolean };

const invalid = (param: string, message: string) => new DomainError('validation_error', message, { param });

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Free text of a config: a string, without NUL or other control characters
 * (tab and newlines are fine), well-formed UTF-16, trimmed. Empty after
 * trimming gives undefined.
 */
function configText(value: unknown, param: string, max: number, options: { singleLine?: boolean } = {}) {
  if (typeof value !== 'string') throw invalid(param, `\`${param}\` must be a string.`);
  const text = value.trim();
  if (CONTROL.test(text) || (options.singleLine && /[\r\n\t]/.test(text)))
    throw invalid(param, `\`${param}\` must not contain control characters.`);
  if (!text.isWellFormed()) throw invalid(param, `\`${param}\` is not valid Unicode text.`);
  if (text.length > max) throw invalid(param, `\`${param}\` must be at most ${max} characters long.`);
  return text === '' ? undefined : text;
}

/** A URL Valise may POST to: the same guard as webhook targets (lib/net/ssrf.ts); returns it normalised. */
function targetUrl(value: unknown, param: string, options: TargetOptions): string {
  if (value === undefined || value === null) throw invalid(param, `This action needs \`${param}\`, the URL to call.`);
  if (typeof value !== 'string') throw invalid(param, `\`${param}\` must be a string.`);
  if (value.length > MAX_URL_LENGTH) throw invalid(param, `\`${param}\` must be at most ${MAX_URL_LENGTH} characters.`);
  const check = checkWebhookUrl(value, { allowPrivate: options.allowPrivateTargets });
  if (!check.ok) throw invalid(param, `This URL cannot be called by a rule: ${check.message}.`);
  return check.url.toString();
}

function positiveAmount(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(param, `\`${param}\` must be a number greater than 0.`);
  }
  return value;
}

/**
 * Checks an action's config and returns it normalised: text trimmed (empty
 * optional text dropped), URLs in their normal form. Throws 400
 * validation_error naming the member at fault (`action_config.<member>`) when
 * a required member is missing or invalid, or a member is not one the action
 * takes.
 */
export function normaliseActionConfig(
  actionType: ActionType,
  config: unknown,
  options: TargetOptions,
): Record<string, unknown> {
  const input = config === undefined ? {} : config;
  if (!isPlainObject(input)) throw invalid('action_config', '`action_config` must be an object.');
  const allowed = ACTION_CONFIG_MEMBERS[actionType];
  for (const member of Object.keys(input)) {
    if (!allowed.includes(member)) {
      const takes =
        allowed.length === 0 ? 'takes no members' : `takes only ${allowed.map((m) => `\`${m}\``).join(', ')}`;
      const why = MAIL_ACTIONS.includes(actionType) ? `; ${MAIL_TARGETS}` : '';
      throw invalid(
        `action_config.${member}`,
        `\`action_config.${member}\` is not allowed: action \`${actionType}\` ${takes}${why}.`,
      );
    }
  }
  const param = (member: string) => `action_config.${member}`;
  switch (actionType) {
    case 'webhook':
    case 'trigger_webhook':
      return { url: targetUrl(input.url, param('url'), options) };
    case 'slack_notify':
      return { webhook_url: targetUrl(input.webhook_url, param('webhook_url'), options) };
    case 'email_recipient':
    case 'email_workspace': {
      const out: Record<string, unknown> = {};
      if (input.subject !== undefined) {
        const subject = configText(input.subject, param('subject'), MAX_SUBJECT_LENGTH, { singleLine: true });
        if (subject !== undefined) out.subject = subject;
      }
      if (input.body !== undefined) {
        const body = configText(input.body, param('body'), MAX_BODY_LENGTH);
        if (body !== undefined) out.body = body;
      }
      return out;
    }
    case 'tag_transfer':
    case 'untag_transfer': {
      const tag =
        input.tag === undefined || input.tag === null
          ? undefined
          : configText(input.tag, param('tag'), MAX_TAG_LENGTH, { singleLine: true });
      if (tag === undefined) throw invalid(param('tag'), `Action \`${actionType}\` needs a non-empty \`tag\`.`);
      return { tag };
    }
    case 'extend_expiry': {
      if (input.hours === undefined && input.days === undefined) {
        throw invalid(param('hours'), 'Action `extend_expiry` needs `hours` or `days`, greater than 0.');
      }
      const out: Record<string, number> = {};
      if (input.hours !== undefined) out.hours = positiveAmount(input.hours, param('hours'));
      if (input.days !== undefined) out.days = positiveAmount(input.days, param('days'));
      if ((out.hours ?? 0) + (out.days ?? 0) * 24 > MAX_EXTENSION_HOURS) {
        throw invalid(
          param(out.days === undefined ? 'hours' : 'days'),
          `\`extend_expiry\` may add at most 365 days (${MAX_EXTENSION_HOURS} hours) in all.`,
        );
      }
      return out;
    }
    case 'archive_transfer':
      return {};
  }
}

/**
 * The members of a previous config that a new action type also takes: when a
 * PATCH changes `action_type` without sending `action_config`, these carry over
 * (webhook to trigger_webhook keeps `url`) and the rest is dropped.
 */
export function carryOverConfig(actionType: ActionType, previous: Record<string, unknown>): Record<string, unknown> {
  const allowed = ACTION_CONFIG_MEMBERS[actionType];
  const out: Record<string, unknown> = {};
  for (const member of allowed) if (Object.hasOwn(previous, member)) out[member] = previous[member];
  return out;
}

/** Hours an extend_expiry config adds. */
export function extensionHours(config: Record<string, unknown>): number {
  const hours = typeof config.hours === 'number' ? config.hours : 0;
  const days = typeof config.days === 'number' ? config.days : 0;
  return hours + days * 24;
}
