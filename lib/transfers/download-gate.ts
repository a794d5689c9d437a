import type { Config } from '../config.ts';
import { addressBucket } from '../net/address-bucket.ts';
import { type Slot, SlotGate } from '../net/slot-gate.ts';
import { createObjectStore, type ObjectStore } from '../storage/object-store.ts';

// Public downloads are anonymous and may be slow on purpose: this process
// streams only so many at once, per client address, per transfer and in all,
// and reads them through an object-store pool of their own, sized to the total,
// so they can never take the sockets uploads and the API's other calls need.

export type DownloadLimits = Config['transfers']['downloads'];

/** Which bound refused a download. */
export type DownloadRefusal = 'downloads_per_ip' | 'downloads_per_transfer' | 'downloads_busy';

export type DownloadSlot = Slot<DownloadRefusal>;

/**
 * Counts the downloads streaming now; each holds a slot from its start until its response ends.
 * A client is counted by its address bucket (an IPv6 client by its /64, lib/net/address-bucket.ts):
 * one subscriber's many IPv6 addresses share one share of the cap.
 */
export class DownloadGate {
  private readonly slots: SlotGate<'downloads_per_ip' | 'downloads_per_transfer', 'downloads_busy'>;

  constructor(limits: Pick<DownloadLimits, 'perIp' | 'perTransfer' | 'max'>) {
    this.slots = new SlotGate(limits.max, 'downloads_busy', [
      ['downloads_per_ip', limits.perIp],
      ['downloads_per_transfer', limits.perTransfer],
    ]);
  }

  enter(ip: string, transferId: string): DownloadSlot {
    return this.slots.enter({ downloads_per_ip: addressBucket(ip), downloads_per_transfer: transferId });
  }

  /** Downloads streaming now. */
  active(): number {
    return this.slots.active();
  }
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
