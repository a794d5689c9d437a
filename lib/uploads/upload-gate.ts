import type { Config } from '../config.ts';
import { addressBucket } from '../net/address-bucket.ts';
import { type Slot, SlotGate } from '../net/slot-gate.ts';

// An upload holds a part buffer (8 MiB, more for files past 78 GiB) for as long as its client
// takes to fill it, up to UPLOAD_IDLE_TIMEOUT of silence at a time: this process receives only
// so many at once, from one client address (an IPv6 client by its /64), for one holder of upload
// URLs (a transfer, a vault, or the publishable key that started intake submissions) and in all,
// so their buffers stay within UPLOADS_MAX × the part size, whoever opens them.

/** Which bound refused an upload. */
export type UploadRefusal = 'uploads_per_ip' | 'uploads_per_key' | 'uploads_busy';

export type UploadLimits = Config['transfers']['uploads'];

/** Counts the uploads being received now; each holds a slot from its start until its body is done with. */
export class UploadGate {
  private readonly slots: SlotGate<'uploads_per_ip' | 'uploads_per_key', 'uploads_busy'>;

  constructor(limits: Pick<UploadLimits, 'perIp' | 'perKey' | 'max'>) {
    this.slots = new SlotGate(limits.max, 'uploads_busy', [
      ['uploads_per_ip', limits.perIp],
      ['uploads_per_key', limits.perKey],
    ]);
  }

  /** `holder`: whose upload URL this is (UploadTarget.holder). */
  enter(ip: string, holder: string): Slot<UploadRefusal> {
    return this.slots.enter({ uploads_per_ip: addressBucket(ip), uploads_per_key: holder });
  }

  /** Uploads being received now. */
  active(): number {
    return this.slots.active();
  }
}
