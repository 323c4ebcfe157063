import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address, as numbers. */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [Number.parseInt(group, 16)];
      // An embedded IPv4 address takes the last two groups.
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address a client address stands for (an IPv4-mapped IPv6 address counts as IPv4), if any. */
function ipv4Of(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  return mapped ?? (isIPv4(address) ? address : undefined);
}

/**
 * What every client address that is no IP address counts as: behind TRUST_PROXY the address is taken
 * from X-Forwarded-For, which a client may fill with anything, and each made-up value must not get
 * quotas of its own.
 */
const UNPARSED_CLIENT = 'unparsed-client-address';

/** The address limits per address count a client under: itself if it is an IP address, else one shared name. */
export function clientAddress(address: string): string {
  return ipv4Of(address) !== undefined || isIPv6(address) ? address : UNPARSED_CLIENT;
}

const ipv6Prefix = (address: string, groups: number): string =>
  `${ipv6Groups(address.split('%')[0] ?? address)
    .slice(0, groups)
    .map((group) => group.toString(16))
    .join(':')}::/${groups * 16}`;

/**
 * The network a client address belongs to for limits per network: its /24 for IPv4 (an IPv4-mapped
 * IPv6 address counts as IPv4), its /64 for IPv6, the usual size of one customer's allocation.
 */
export function networkPrefix(address: string): string {
  const v4 = ipv4Of(address);
  if (v4 !== undefined) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(address)) return UNPARSED_CLIENT;
  return ipv6Prefix(address, 4);
}

/**
 * The wider network of an IPv6 client: its /48, what one site is usually given (65,536 /64s). Undefined
 * for IPv4, whose /24 is already the widest network counted.
 */
export function ipv6SitePrefix(address: string): string | undefined {
  if (ipv4Of(address) !== undefined || !isIPv6(address)) return undefined;
  return ipv6Prefix(address, 3);
}
