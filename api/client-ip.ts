import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Config } from '../lib/config.ts';
import { normaliseIp } from '../lib/net/ip-allow-list.ts';
import { type AnyRequest, headerOf } from './types.ts';

// The caller's address. X-Forwarded-For is a list each proxy appends to: only
// the entries written by proxies we trust mean anything, and the leftmost
// ones are whatever the client sent. So the chain is walked from the right,
// starting at the socket peer: while the current hop is a trusted proxy, the
// address it reports (the entry to its left) replaces it. The first hop that
// is not trusted, or the last address reached, is the client.
//
// A hop is trusted when it is within TRUST_PROXY_HOPS of the socket peer (if
// set) and inside TRUSTED_PROXIES (if set). With neither set, the header is
// ignored and the socket peer is the client.

/** At most this many X-Forwarded-For entries are read, from the right. */
const MAX_CHAIN = 32;

const resolved = new WeakMap<AnyRequest, string>();
const proxyLists = new WeakMap<Config, BlockList>();

export function clientIp(request: AnyRequest, config: Config): string {
  const cached = resolved.get(request);
  if (cached !== undefined) return cached;
  const ip = walkChain(request, config);
  resolved.set(request, ip);
  return ip;
}

/**
 * Whether the client reached us over TLS: the connection itself is TLS, or a
 * trusted proxy (the socket peer) says so in the X-Forwarded-Proto value it
 * appended (the rightmost one).
 */
export function servedOverTls(request: AnyRequest, config: Config): boolean {
  if ((request.raw.req.socket as Partial<TLSSocket>).encrypted === true) return true;
  if (!trustedHop(config, normaliseIp(request.info.remoteAddress), 0)) return false;
  const proto = headerOf(request, 'x-forwarded-proto')?.split(',').at(-1)?.trim().toLowerCase();
  return proto === 'https';
}

function walkChain(request: AnyRequest, config: Config): string {
  const peer = normaliseIp(request.info.remoteAddress);
  const { hops, addresses } = config.api.proxies;
  if (hops === 0 && addresses.length === 0) return peer;
  const chain = (headerOf(request, 'x-forwarded-for') ?? '').split(',').slice(-MAX_CHAIN);
  let current = peer;
  for (let hop = 0; trustedHop(config, current, hop); hop++) {
    const entry = chain.pop();
    if (entry === undefined) break;
    const reported = parseEntry(entry);
    // Not an address ("unknown", garbage): the last trusted hop is as far as we can see.
    if (reported === null) break;
    current = reported;
  }
  return current;
}

/** Whether the hop `index` places from the socket peer (0), at `address`, is a proxy we trust. */
function trustedHop(config: Config, address: string, index: number): boolean {
  const { hops, addresses } = config.api.proxies;
  if (hops === 0 && addresses.length === 0) return false;
  if (hops > 0 && index >= hops) return false;
  if (addresses.length === 0) return true;
  const family = isIP(address);
  if (family === 0) return false;
  return proxyList(config).check(address, family === 6 ? 'ipv6' : 'ipv4');
}

function proxyList(config: Config): BlockList {
  let list = proxyLists.get(config);
  if (!list) {
    list = new BlockList();
    for (const entry of config.api.proxies.addresses) {
      const [base = '', bits] = entry.split('/');
      const type = isIP(base) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) list.addAddress(base, type);
      else list.addSubnet(base, Number(bits), type);
    }
    proxyLists.set(config, list);
  }
  return list;
}

/** One X-Forwarded-For entry as an address: `1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:443`; else null. */
function parseEntry(entry: string): string | null {
  let value = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed?.[1]) value = bracketed[1];
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  return isIP(value) === 0 ? null : normaliseIp(value);
}
