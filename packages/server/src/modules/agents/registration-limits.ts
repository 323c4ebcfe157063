import { isIPv4, isIPv6 } from 'node:net';
import type { Db } from '../../db/connect.js';
import { countRegistration, forgetRegistrationWindowsBefore } from './registration-counts-store.js';
import { TooManyRequestsError } from '../../kernel/errors.js';

export interface RegistrationRateLimit {
  /** Registrations one client address may make per window. */
  perAddress: number;
  /** Registrations one network prefix (/24 IPv4, /64 IPv6) may make per window. */
  perPrefix: number;
  windowMs: number;
}

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

/**
 * The network a client address belongs to for the prefix limit: its /24 for IPv4 (an IPv4-mapped
 * IPv6 address counts as IPv4), its /64 for IPv6, the usual size of one customer's allocation.
 */
export function networkPrefix(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const v4 = mapped ?? (isIPv4(address) ? address : undefined);
  if (v4 !== undefined) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address.split('%')[0] ?? address).slice(0, 4);
  return `${groups.map((group) => group.toString(16)).join(':')}::/64`;
}

/**
 * Fixed windows counted in the database (so across nodes), one counter per client address and one per
 * network prefix, in the transaction that writes the agent: a registration that fails for any reason
 * (this limit included) leaves the counters as they were.
 */
export class RegistrationLimiter {
  private forgottenBefore = 0;

  constructor(private readonly limit: RegistrationRateLimit) {}

  /** Counts a registration from `address` in `trx`; 429 with Retry-After when either limit is passed. */
  async admit(trx: Db, address: string, now: number): Promise<void> {
    const { perAddress, perPrefix, windowMs } = this.limit;
    const windowStart = Math.floor(now / windowMs) * windowMs;
    await this.forgetPastWindows(trx, windowStart);
    const prefix = networkPrefix(address);
    const [byAddress = 0, byPrefix = 0] = await countRegistration(
      trx,
      [`address:${address}`, `prefix:${prefix}`],
      windowStart,
    );
    if (byAddress <= perAddress && byPrefix <= perPrefix) return;
    const retryAfter = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    const [what, max] =
      byAddress > perAddress ? [`address (${address})`, perAddress] : [`network (${prefix})`, perPrefix];
    throw new TooManyRequestsError(
      'REGISTRATION_RATE_LIMITED',
      `At most ${max} registrations per ${windowMs / 1000} s from one ${what}; try again in ${retryAfter} s`,
      retryAfter,
    );
  }

  /** Once per window on each node: the counters of windows that ended are deleted. */
  private async forgetPastWindows(trx: Db, windowStart: number): Promise<void> {
    if (windowStart <= this.forgottenBefore) return;
    this.forgottenBefore = windowStart;
    await forgetRegistrationWindowsBefore(trx, windowStart);
  }
}
