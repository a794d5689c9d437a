// Human-readable values for people (mail, share pages), never for machines:
// the API always returns raw numbers.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Binary units, at most one decimal, trailing ".0" dropped: 0 B, 1023 B, 1.5 MiB, 20 GiB. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`);
  let unit = 0;
  let value = bytes;
  // Compare the value as it will be shown, so that 1023.96 KiB reads "1 MiB", not "1024 KiB".
  while (unit < UNITS.length - 1 && shown(value, unit) >= 1024) {
    value /= 1024;
    unit++;
  }
  return `${shown(value, unit)} ${UNITS[unit]}`;
}

// Whole bytes; one decimal for the larger units.
function shown(value: number, unit: number): number {
  return unit === 0 ? Math.round(value) : Math.round(value * 10) / 10;
}
