import { InvalidArgumentError } from './errors.ts';

// Checks of what callers pass to SDK methods, run before any request: a wrong
// argument is an InvalidArgumentError naming it, never a TypeError from deep
// inside, nor a request the API has to refuse (or, worse, a counted download).

/** What a value is, for "expected …; got <this>" messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof URL) return urlKind(value);
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'string';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name;
    if (name && name !== 'Object') return `a ${name}`;
    const keys = Object.keys(value);
    return keys.length ? `an object with ${keys.slice(0, 5).join(', ')}` : 'an empty object';
  }
  return typeof value;
}

export function expectObject(value: unknown, param: string): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(param, `expected an object; got ${describe(value)}`);
  }
}

export function expectFunction(value: unknown, param: string, what: string, optional = false): void {
  if (optional && value === undefined) return;
  if (typeof value !== 'function') throw new InvalidArgumentError(param, `expected ${what}; got ${describe(value)}`);
}

export function expectString(value: unknown, param: string, optional = false): void {
  if (optional && value === undefined) return;
  if (typeof value !== 'string') throw new InvalidArgumentError(param, `expected a string; got ${describe(value)}`);
}

/** A whole number of at least `min`; `undefined` passes when optional. */
export function expectInteger(value: unknown, param: string, min: number, optional = true): void {
  if (optional && value === undefined) return;
  if (!(typeof value === 'number' && Number.isSafeInteger(value) && value >= min)) {
    const what = min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`;
    throw new InvalidArgumentError(param, `expected ${what}; got ${show(value)}`);
  }
}

/** A number of milliseconds, above zero (or zero when `allowZero`); `undefined` passes. */
export function expectDuration(value: unknown, param: string, allowZero = false): void {
  if (value === undefined) return;
  if (!(typeof value === 'number' && Number.isFinite(value) && (value > 0 || (allowZero && value === 0)))) {
    const what = allowZero ? 'a non-negative' : 'a positive';
    throw new InvalidArgumentError(param, `expected ${what} number of milliseconds; got ${show(value)}`);
  }
}

export function expectSignal(value: unknown, param: string): void {
  if (value !== undefined && !(value instanceof AbortSignal)) {
    throw new InvalidArgumentError(param, `expected an AbortSignal; got ${describe(value)}`);
  }
}

export function expectOneOf<T extends string>(value: unknown, param: string, allowed: readonly T[]): void {
  if (value !== undefined && !allowed.includes(value as T)) {
    const list = allowed.map((item) => `'${item}'`).join(' or ');
    throw new InvalidArgumentError(param, `expected ${list}; got ${show(value)}`);
  }
}

/** An absolute http: or https: URL. */
export function expectHttpUrl(value: unknown, param: string, what: string): URL {
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : value instanceof URL ? value : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidArgumentError(param, `expected ${what} (an http: or https: URL); got ${show(value)}`);
  }
  return url;
}

/** A number or a short string shown as itself, anything else described. */
function show(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string' && value !== '' && value.length <= 80) return JSON.stringify(value);
  return describe(value);
}

/** `an http: URL`, `a data: URL` (the article as the scheme's first letter is spoken). */
export function urlKind(url: URL): string {
  return `${/^[aefhilmnorsx]/.test(url.protocol) ? 'an' : 'a'} ${url.protocol} URL`;
}
