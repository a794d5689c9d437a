// One spelling per address (docs/recipients.md, "Addresses"): surrounding
// spaces dropped and the domain in lower case, since DNS names are
// case-insensitive. The local part is kept as given: RFC 5321 lets a mail
// server tell `Ann` from `ann`, so Valise mails exactly what it was given, but
// no server in practice does, so two addresses that differ only in case are
// one entry of the address book (a case-insensitive unique index).

export function normaliseEmail(address: string): string {
  const trimmed = address.trim();
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return trimmed;
  return `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
}

/** The same address, whatever its case: the key of the address book. */
export const sameAddress = (address: string) => normaliseEmail(address).toLowerCase();

/**
 * Tags: trimmed, lower-cased, duplicates dropped, first occurrence's order kept,
 * so `VIP` and `vip ` are one tag and filtering by one finds the other.
 */
export function normaliseTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()))];
}
