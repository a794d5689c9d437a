import { z } from 'zod';
import type { ApiKeyRow } from '../db/queries/api-keys.ts';
import type { FileRow, TransferRow } from '../db/queries/transfers.ts';
import { ENCRYPTION_MODES, ENVIRONMENTS, KEY_TYPES, TRANSFER_STATUSES } from '../vocabulary.ts';
import { view } from './define.ts';

// What events say about a resource, each declared once with the one function
// that builds it from a row. Payloads embed these views by name.

export const TransferEventView = view('TransferEventView', 'The transfer.', {
  id: z.uuid().describe('The transfer id.'),
  short_code: z.string().describe('Readable identifier, also the share link path `/t/<short_code>`.'),
  status: z.enum(TRANSFER_STATUSES).describe('The transfer status after the change.'),
  transfer_title: z.string().nullable().describe('Title given by the sender.'),
  encryption_mode: z.enum(ENCRYPTION_MODES).describe('`server` (default) or end-to-end `e2e`.'),
  recipient: z.string().nullable().describe('E-mail address the share link is sent to.'),
  expires_at: z.iso.datetime().describe('When the transfer expires.'),
});

/** The transfer view with its file totals, as `transfer.created` carries it. */
export const TransferCreatedView = TransferEventView.extend({
  files_count: z.int().min(1).describe('Number of files declared.'),
  total_bytes: z
    .int()
    .min(0)
    .describe('Sum of the declared file sizes, in bytes (of the encrypted blobs in `e2e` mode).'),
}).meta({ title: 'TransferEventView', description: 'The transfer, with its file totals.' });

/** Ids and state, never passwords or keys. */
export function transferEventView(transfer: TransferRow): z.input<typeof TransferEventView> {
  return {
    id: transfer.id,
    short_code: transfer.short_code,
    status: transfer.status,
    transfer_title: transfer.transfer_title,
    encryption_mode: transfer.encryption_mode,
    recipient: transfer.recipient,
    expires_at: transfer.expires_at.toISOString(),
  };
}

export function transferCreatedView(
  transfer: TransferRow,
  files: readonly FileRow[],
): z.input<typeof TransferCreatedView> {
  return {
    ...transferEventView(transfer),
    files_count: files.length,
    total_bytes: files.reduce((sum, f) => sum + f.size, 0),
  };
}

export const ApiKeyEventView = view('ApiKeyEventView', 'The API key.', {
  id: z.uuid().describe('The key id.'),
  name: z.string().describe('The key name.'),
  key_prefix: z.string().describe('Prefix plus six characters, as lists show it; never the full value.'),
  key_type: z.enum(KEY_TYPES).describe('`full` or `restricted`.'),
  scopes: z
    .array(z.string().describe('A scope, `resource:action`, or `*`.'))
    .describe('Scopes held; `["*"]` for a full key.'),
  environment: z.enum(ENVIRONMENTS).describe('The key environment.'),
});

/** Never the key value or its hash. */
export function apiKeyEventView(row: ApiKeyRow): z.input<typeof ApiKeyEventView> {
  const { id, name, key_prefix, key_type, scopes, environment } = row;
  return { id, name, key_prefix, key_type, scopes, environment };
}

/** Views several events share: documented once in docs/events.md. */
export const SHARED_VIEWS = [TransferEventView, ApiKeyEventView] as const;
