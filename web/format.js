// Sizes for people, the same binary units as the server's lib/format.ts.
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatBytes(bytes) {
  let unit = 0;
  let value = bytes;
  const shown = (v, u) => (u === 0 ? Math.round(v) : Math.round(v * 10) / 10);
  while (unit < UNITS.length - 1 && shown(value, unit) >= 1024) {
    value /= 1024;
    unit++;
  }
  return `${shown(value, unit)} ${UNITS[unit]}`;
}

/** A message for people from an API error body, a ValiseError or anything thrown. */
export function messageOf(error) {
  return error?.error?.message ?? error?.message ?? String(error);
}
