import { isIP } from 'node:net';
import { normaliseIp } from './ip-allow-list.ts';

/**
 * The unit per-address limits count in: the address itself for IPv4, its /64
 * for IPv6 (one subscriber usually holds a whole /64, so counting single IPv6
 * addresses would hand each client 2^64 budgets).
 */
export function addressBucket(ip: string): string {
  const address = normaliseIp(ip).split('%')[0] ?? '';
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const groupsOf = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
