import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// The webhook target guard (docs/webhooks.md, "Targets"). Customers choose the
// URLs Valise will POST to, so without this a webhook is a way to reach
// anything the workers can: loopback services, the private network, the
// cloud's metadata endpoint and the credentials it hands out.
//
// Two steps. checkWebhookUrl judges the URL alone (when a webhook is saved).
// resolveTarget resolves the name once, refuses unless every address is public,
// and returns the address to connect to: the caller pins that exact IP (for
// node:https, a `lookup` that answers with it; Host and SNI keep the name), so
// a second lookup cannot return something else (DNS rebinding). Redirects are
// not followed: each hop would be a new, unchecked target.
//
// WEBHOOK_ALLOW_PRIVATE_TARGETS (dev and tests only) becomes `allowPrivate`:
// loopback, private and link-local targets are then allowed, and plain http to
// a loopback host; metadata endpoints stay refused whatever the setting.

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'multicast'
  | 'unspecified'
  | 'reserved'
  | 'metadata';

function blockList(type: 'ipv4' | 'ipv6', entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

// First match wins, so the single metadata addresses come before the ranges
// that contain them (169.254/16, 100.64/10, fc00::/7).
const IPV4_RULES: ReadonlyArray<readonly [AddressClass, BlockList]> = [
  // AWS, GCP, Azure and OpenStack; ECS task credentials; EKS Pod Identity; Alibaba Cloud.
  ['metadata', blockList('ipv4', ['169.254.169.254', '169.254.170.2', '169.254.170.23', '100.100.100.200'])],
  ['unspecified', blockList('ipv4', ['0.0.0.0/8'])],
  ['loopback', blockList('ipv4', ['127.0.0.0/8'])],
  // RFC 1918, and RFC 6598 shared address space (carrier-grade NAT).
  ['private', blockList('ipv4', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'])],
  ['link_local', blockList('ipv4', ['169.254.0.0/16'])],
  ['multicast', blockList('ipv4', ['224.0.0.0/4'])],
  // Future use and broadcast (240/4 holds 255.255.255.255), IETF protocol
  // assignments, documentation (TEST-NET-1..3) and benchmarking.
  [
    'reserved',
    blockList('ipv4', [
      '240.0.0.0/4',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
    ]),
  ],
];

const IPV6_RULES: ReadonlyArray<readonly [AddressClass, BlockList]> = [
  // AWS instance metadata and EKS Pod Identity over IPv6.
  ['metadata', blockList('ipv6', ['fd00:ec2::254', 'fd00:ec2::23'])],
  // Unique local; deprecated site-local; local-use NAT64 (RFC 8215), which
  // translates to whatever IPv4 the local translator chooses.
  ['private', blockList('ipv6', ['fc00::/7', 'fec0::/10', '64:ff9b:1::/48'])],
  ['link_local', blockList('ipv6', ['fe80::/10'])],
  ['multicast', blockList('ipv6', ['ff00::/8'])],
  // Inside global unicast but not reachable hosts: IETF protocol assignments
  // (Teredo, ORCHID…), documentation (2001:db8::/32, 3fff::/20).
  ['reserved', blockList('ipv6', ['2001::/23', '2001:db8::/32', '3fff::/20'])],
];

// Only 2000::/3 is allocated for global unicast; anything else not named above
// (IPv4-compatible ::/96, discard 100::/64, unassigned space) is `reserved`.
const GLOBAL_UNICAST = blockList('ipv6', ['2000::/3']);

/** The eight 16-bit groups of an address `isIP` accepted as IPv6 (zone already removed). */
function ipv6Groups(address: string): number[] {
  // A trailing dotted quad (::ffff:10.0.0.1) becomes its two groups.
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((group) => group.toString(16)).join(':'),
  );
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const [head = '', tail] = text.split('::');
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function dottedQuad(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address carries, when routing it reaches that IPv4
 * host: IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16).
 */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return dottedQuad(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return dottedQuad(g6, g7);
  if (g0 === 0x2002) return dottedQuad(g1 ?? 0, g2 ?? 0);
  return undefined;
}

/** What kind of destination an IP address is; only `public` is a fit webhook target. */
export function classifyAddress(ip: string): AddressClass {
  // A zone (fe80::1%eth0) names an interface, not a different address.
  const address = ip.split('%')[0] ?? '';
  const family = isIP(address);
  if (family === 4) return IPV4_RULES.find(([, list]) => list.check(address, 'ipv4'))?.[0] ?? 'public';
  if (family !== 6) throw new TypeError(`Not an IP address: ${JSON.stringify(ip)}`);
  const groups = ipv6Groups(address);
  if (groups.every((group) => group === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return 'loopback';
  const ipv4 = embeddedIpv4(groups);
  if (ipv4 !== undefined) return classifyAddress(ipv4);
  const rule = IPV6_RULES.find(([, list]) => list.check(address, 'ipv6'));
  if (rule) return rule[0];
  return GLOBAL_UNICAST.check(address, 'ipv6') ? 'public' : 'reserved';
}

export type RefusalReason =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'https_required'
  | 'credentials_in_url'
  | 'address_not_public'
  | 'metadata_address'
  | 'resolution_failed';

export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
  readonly reason: RefusalReason;
  /** The address at fault, when one is. */
  readonly address: string | undefined;
  readonly addressClass: AddressClass | undefined;

  constructor(
    reason: RefusalReason,
    message: string,
    details: { address?: string; addressClass?: AddressClass; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.reason = reason;
    this.address = details.address;
    this.addressClass = details.addressClass;
  }
}

/** Which targets Valise may call, webhooks and rule actions alike. */
export type TargetPolicy = {
  /** From WEBHOOK_ALLOW_PRIVATE_TARGETS; never set in production. */
  allowPrivate: boolean;
};

export type UrlRefusal = {
  ok: false;
  reason: RefusalReason;
  message: string;
  address?: string;
  addressClass?: AddressClass;
};
export type UrlCheck = { ok: true; url: URL } | UrlRefusal;

// With allowPrivate, these are what a local test receiver can be. Unspecified
// (0.0.0.0 reaches loopback on Linux), multicast and reserved addresses are
// never a receiver, and metadata endpoints are never reachable.
const ALLOWED_WHEN_PRIVATE: ReadonlySet<AddressClass> = new Set(['public', 'loopback', 'private', 'link_local']);

function addressRefusal(address: string, addressClass: AddressClass, allowPrivate: boolean): UrlRefusal | undefined {
  if (addressClass === 'metadata') {
    return {
      ok: false,
      reason: 'metadata_address',
      message: `${address} is a cloud metadata endpoint`,
      address,
      addressClass,
    };
  }
  if (addressClass === 'public' || (allowPrivate && ALLOWED_WHEN_PRIVATE.has(addressClass))) return undefined;
  return {
    ok: false,
    reason: 'address_not_public',
    message: `${address} is not a public address (${addressClass})`,
    address,
    addressClass,
  };
}

/** The host as a resolver or a socket takes it: no IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Names that only ever lead to a cloud metadata service, from inside that
 * cloud (GCP's, and AWS's `instance-data`): refused by name when a URL is saved,
 * as their addresses would be when it is called.
 */
export const METADATA_HOSTNAMES: readonly string[] = [
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
];

/**
 * Literal IPs are classified now; `localhost` names are loopback by definition
 * (RFC 6761); the metadata service's own names are metadata.
 */
function literalClass(host: string): AddressClass | undefined {
  if (isIP(host) !== 0) return classifyAddress(host);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (METADATA_HOSTNAMES.includes(name)) return 'metadata';
  return name === 'localhost' || name.endsWith('.localhost') ? 'loopback' : undefined;
}

/**
 * Judges a webhook URL without resolving it: it must parse, use https (plain
 * http only to a loopback host with allowPrivate), carry no credentials, and
 * a literal IP host must pass the address rules. Any port is allowed.
 */
export function checkWebhookUrl(raw: string, { allowPrivate }: TargetPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid_url', message: 'Not a valid absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: 'unsupported_scheme', message: `Scheme ${url.protocol} is not allowed; use https` };
  }
  // Credentials in a URL end up in logs and delivery records; receivers authenticate by signature.
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'credentials_in_url', message: 'The URL must not contain a user name or password' };
  }
  if (url.port === '0') return { ok: false, reason: 'invalid_url', message: 'Port 0 is not a destination' };
  const host = bareHost(url);
  const hostClass = literalClass(host);
  if (hostClass !== undefined) {
    const refusal = addressRefusal(host, hostClass, allowPrivate);
    if (refusal) return refusal;
  }
  if (url.protocol === 'http:' && !(allowPrivate && hostClass === 'loopback')) {
    return { ok: false, reason: 'https_required', message: 'Webhook URLs must use https' };
  }
  return { ok: true, url };
}

export type LookupAddress = { address: string; family: number };
/** The shape of `dns.promises.lookup(host, { all: true })`; tests inject their own. */
export type Lookup = (hostname: string, options: { all: true }) => Promise<readonly LookupAddress[]>;

export type ResolvedTarget = {
  url: URL;
  /** For the Host header and TLS SNI/certificate checks. */
  hostname: string;
  /** The one address to connect to; never resolve the name again. */
  address: string;
  family: 4 | 6;
  port: number;
  addressClass: AddressClass;
};

const systemLookup: Lookup = (hostname, options) => dnsLookup(hostname, options);

/**
 * Checks the URL, resolves its host once and refuses the target if ANY
 * address is unfit, since the connection could go to any of them. Returns the
 * first address; throws TargetRefusedError. Opens no connection.
 */
export async function resolveTarget(
  raw: string,
  { allowPrivate, lookup = systemLookup }: TargetPolicy & { lookup?: Lookup },
): Promise<ResolvedTarget> {
  const check = checkWebhookUrl(raw, { allowPrivate });
  if (!check.ok) throw new TargetRefusedError(check.reason, check.message, check);
  const { url } = check;
  const hostname = bareHost(url);
  let addresses: readonly LookupAddress[];
  if (isIP(hostname) !== 0) {
    addresses = [{ address: hostname, family: isIP(hostname) }];
  } else {
    try {
      addresses = await lookup(hostname, { all: true });
    } catch (cause) {
      throw new TargetRefusedError('resolution_failed', `Could not resolve ${hostname}`, { cause });
    }
  }
  const classified = addresses.map(({ address }) => {
    if (isIP(address) === 0) {
      throw new TargetRefusedError('resolution_failed', `Resolving ${hostname} gave ${JSON.stringify(address)}`);
    }
    return { address, addressClass: classifyAddress(address) };
  });
  const [chosen] = classified;
  if (chosen === undefined) throw new TargetRefusedError('resolution_failed', `${hostname} has no addresses`);
  const refusals = classified.flatMap(
    ({ address, addressClass }) => addressRefusal(address, addressClass, allowPrivate) ?? [],
  );
  // A metadata address anywhere in the answer is the refusal to report.
  const refusal = refusals.find(({ reason }) => reason === 'metadata_address') ?? refusals[0];
  if (refusal) throw new TargetRefusedError(refusal.reason, `${hostname}: ${refusal.message}`, refusal);
  for (const { address, addressClass } of classified) {
    // Plain http was allowed for a loopback name; every address must honour that.
    if (url.protocol === 'http:' && addressClass !== 'loopback') {
      throw new TargetRefusedError('https_required', `${hostname} resolves to ${address}, not loopback; use https`, {
        address,
        addressClass,
      });
    }
  }
  return {
    url,
    hostname,
    address: chosen.address,
    family: isIP(chosen.address) === 6 ? 6 : 4,
    port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    addressClass: chosen.addressClass,
  };
}
