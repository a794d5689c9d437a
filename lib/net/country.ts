import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { classifyAddress } from './ssrf.ts';

// The country of a client address: the one place Valise answers it (the audit log's
// `country_code`, and later analytics and the rules' `country_code` condition). The lookup is
// offline: geoip-country reads its database (GeoLite2 Country data by MaxMind, CC BY-SA 4.0,
// under MaxMind's GeoLite2 EULA: docs/audit.md, "Country") from the package into memory when
// this module loads, and no address ever leaves the process.

type GeoipCountry = { lookup(ip: string): { country: string } | null };
const geoip = createRequire(import.meta.url)('geoip-country') as GeoipCountry;

/**
 * The ISO 3166-1 alpha-2 code of the country an address is registered in, or null: no address,
 * not an address, not public (loopback, private, link-local, reserved…), or not in the database.
 */
export function countryOf(ip: string | null): string | null {
  if (ip === null) return null;
  const address = ip.split('%')[0] ?? '';
  if (isIP(address) === 0 || classifyAddress(address) !== 'public') return null;
  const country = geoip.lookup(address)?.country;
  return country && /^[A-Z]{2}$/.test(country) ? country : null;
}
