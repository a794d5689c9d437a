import type { Request } from '@hapi/hapi';
import type { Config } from '../lib/config.ts';
import { normaliseIp } from '../lib/net/ip-allow-list.ts';
import { headerOf } from './types.ts';

/** The caller's address; X-Forwarded-For is believed only behind a trusted proxy (TRUST_PROXY). */
export function clientIp(request: Request, config: Config): string {
  if (config.api.trustProxy) {
    const forwarded = headerOf(request, 'x-forwarded-for')?.split(',')[0]?.trim();
    if (forwarded) return normaliseIp(forwarded);
  }
  return normaliseIp(request.info.remoteAddress);
}
