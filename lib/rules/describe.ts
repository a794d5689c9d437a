// What an event says in one line, for rule notifications (Slack, mail), and
// the placeholders users may put in a rule's mail subject and body.

type EventLike = { id: string; type: string; data: Record<string, unknown>; created_at: Date };

const TRANSFER_PHRASES: Record<string, string> = {
  created: 'was created',
  e2e_created: 'was created, end-to-end encrypted',
  downloaded: 'was downloaded',
  first_download: 'was downloaded for the first time',
  expired: 'expired',
  limit_reached: 'reached its download limit',
  geo_blocked: 'refused a download from a blocked country',
  password_failed: 'refused a download with a wrong password',
  approved: 'was approved',
  rejected: 'was rejected',
  approval_requested: 'is waiting for approval',
};

const KEY_PHRASES: Record<string, string> = {
  created: 'was created',
  revoked: 'was revoked',
  rotated: 'was rotated',
  expired: 'expired',
};

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export function describeEvent(event: EventLike): string {
  const [family = '', action = ''] = event.type.split('.');
  if (family === 'transfer') {
    const transfer = record(event.data.transfer);
    const title = str(transfer.transfer_title) ?? 'Untitled transfer';
    const code = str(transfer.short_code);
    const downloads = typeof event.data.total_downloads === 'number' ? ` (${event.data.total_downloads} so far)` : '';
    const phrase = TRANSFER_PHRASES[action] ?? `: ${event.type}`;
    return `Transfer “${title}”${code ? ` (${code})` : ''} ${phrase}${action === 'downloaded' ? downloads : ''}.`;
  }
  if (family === 'api_key') {
    const key = record(event.data.api_key);
    const name = str(key.name) ?? 'unnamed';
    const prefix = str(key.key_prefix);
    return `API key “${name}”${prefix ? ` (${prefix}…)` : ''} ${KEY_PHRASES[action] ?? event.type}.`;
  }
  return `Event ${event.type} (${event.id}).`;
}

/** `{{name}}` placeholders of rule mail (docs/rules.md, "Actions"); unknown ones are left as written. */
export function placeholders(event: EventLike, shareUrl: string | null): Record<string, string> {
  const transfer = record(event.data.transfer);
  return {
    'event.id': event.id,
    'event.type': event.type,
    'event.timestamp': event.created_at.toISOString(),
    'event.summary': describeEvent(event),
    'transfer.id': str(transfer.id) ?? '',
    'transfer.short_code': str(transfer.short_code) ?? '',
    'transfer.title': str(transfer.transfer_title) ?? '',
    'transfer.status': str(transfer.status) ?? '',
    'transfer.expires_at': str(transfer.expires_at) ?? '',
    'transfer.share_url': shareUrl ?? '',
  };
}

export function fillIn(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{\s*([a-z_.]+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}
