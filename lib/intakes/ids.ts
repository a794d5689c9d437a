import { randomBytes } from 'node:crypto';

/** 26 characters of lowercase base 32 (130 bits): intake and document ids, safe in paths and unguessable. */
export function randomId(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  return [...randomBytes(26)].map((byte) => alphabet[byte & 31]).join('');
}

export const INTAKE_ID_PATTERN = /^in_[0-9a-v]{26}$/;
export const DOCUMENT_ID_PATTERN = /^doc_[0-9a-v]{26}$/;
