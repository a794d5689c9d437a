import { createEventQueries } from '../db/queries/events.ts';
import type { PersonalLink } from '../db/queries/recipients.ts';
import type { TransferRow } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import { transferEventView } from '../events/views.ts';
import { countryOf } from '../net/country.ts';
import type { Services } from '../services.ts';
import type { Requester } from './share-passwords.ts';
import type { DownloadPath } from './vocabulary.ts';

// Transfers restricted to countries (docs/transfers.md, "Countries"): a download is served only to
// a client whose address the offline database places in one of `allowed_countries`. An address it
// cannot place (private, reserved, not in the database) is refused as well: a restriction is a
// promise to the sender, and an unknown country cannot keep it.

/** Whether a client in `country` (null: not known) may download this transfer. */
export function countryAllowed(transfer: Pick<TransferRow, 'allowed_countries'>, country: string | null): boolean {
  const allowed = transfer.allowed_countries;
  if (allowed === null) return true;
  return country !== null && allowed.includes(country);
}

/**
 * Refuses (403 `forbidden`, `reason: geo_blocked`) a download of a restricted transfer from outside
 * its countries, after recording `transfer.geo_blocked`; returns the client's country otherwise.
 * Called before anything is counted or served, on every download path.
 */
export async function checkCountry(
  services: Services,
  transfer: TransferRow,
  requester: Requester,
  path: DownloadPath,
  personal: PersonalLink | null = null,
): Promise<string | null> {
  const country = countryOf(requester.ip);
  if (countryAllowed(transfer, country)) return country;
  const tenant = { workspaceId: transfer.workspace_id, environment: transfer.environment };
  await createEventQueries(services.db).record(tenant, 'transfer.geo_blocked', {
    transfer: transferEventView(transfer),
    ip_address: requester.ip,
    country_code: country,
    path,
    ...(personal ? { recipient: { id: personal.recipient_id, email: personal.email } } : {}),
  });
  throw new DomainError(
    'forbidden',
    country
      ? `This transfer cannot be downloaded from your country (${country}).`
      : 'This transfer can be downloaded only from some countries, and the country of your address is not known.',
    { details: { reason: 'geo_blocked', country_code: country } },
  );
}
