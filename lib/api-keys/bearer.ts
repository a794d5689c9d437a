import { DomainError } from '../errors.ts';

/**
 * The value of an `Authorization: Bearer <value>` header, or the spec's refusal: `missing_api_key`
 * without one, `invalid_api_key` for any other shape. `kind` names the key in the messages.
 */
export function bearerValue(header: string | undefined, kind: { name: string; placeholder: string }): string {
  if (header === undefined || header.trim() === '') {
    throw new DomainError(
      'missing_api_key',
      `No ${kind.name} provided. Send it as \`Authorization: Bearer ${kind.placeholder}\`.`,
    );
  }
  const value = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (!value) throw new DomainError('invalid_api_key', `The ${kind.name} is malformed.`);
  return value;
}
