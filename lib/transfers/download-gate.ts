import type { Config } from '../config.ts';
import { createObjectStore, type ObjectStore } from '../storage/object-store.ts';

// Public downloads are anonymous and may be slow on purpose: this process
// streams only so many at once, per client address, per transfer and in all,
// and reads them through an object-store pool of their own, sized to the total,
// so they can never take the sockets uploads and the API's other calls need.

export type DownloadLimits = Config['transfers']['downloads'];

/** Which bound refused a download. */
export type DownloadRefusal = 'downloads_per_ip' | 'downloads_per_transfer' | 'downloads_busy';

export type DownloadSlot = { ok: true; release: () => void } | { ok: false; reason: DownloadRefusal };

/** Counts the downloads streaming now; each holds a slot from its start until its response ends. */
export class DownloadGate {
  private readonly byIp = new Map<string, number>();
  private readonly byTransfer = new Map<string, number>();
  private total = 0;
  private readonly limits: Pick<DownloadLimits, 'perIp' | 'perTransfer' | 'max'>;

  constructor(limits: Pick<DownloadLimits, 'perIp' | 'perTransfer' | 'max'>) {
    this.limits = limits;
  }

  enter(ip: string, transferId: string): DownloadSlot {
    if (this.total >= this.limits.max) return { ok: false, reason: 'downloads_busy' };
    if ((this.byIp.get(ip) ?? 0) >= this.limits.perIp) return { ok: false, reason: 'downloads_per_ip' };
    if ((this.byTransfer.get(transferId) ?? 0) >= this.limits.perTransfer) {
      return { ok: false, reason: 'downloads_per_transfer' };
    }
    this.total++;
    bump(this.byIp, ip, 1);
    bump(this.byTransfer, transferId, 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        bump(this.byIp, ip, -1);
        bump(this.byTransfer, transferId, -1);
      },
    };
  }

  /** Downloads streaming now. */
  active(): number {
    return this.total;
  }
}

function bump(counts: Map<string, number>, key: string, by: number) {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

export type PublicDownloads = { gate: DownloadGate; objects: ObjectStore };

/**
 * The gate and the downloads' own object store: one socket per streaming download, so the
 * pool holds `max`; its sockets may stay silent while a recipient pauses, up to the idle
 * timeout that ends the download itself.
 */
export function createPublicDownloads(config: Config): PublicDownloads {
  const limits = config.transfers.downloads;
  return {
    gate: new DownloadGate(limits),
    objects: createObjectStore(config.s3, {
      maxSockets: limits.max,
      socketTimeoutMs: config.s3.socketTimeoutMs + limits.idleMs,
    }),
  };
}
