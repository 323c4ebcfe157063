import type { Db } from '../../db/connect.js';
import { clientAddress, ipv6SitePrefix, networkPrefix } from '../../kernel/client-networks.js';
import {
  countRegistration,
  forgetRegistrationWindowsBefore,
  registrationCountsIn,
} from './registration-counts-store.js';
import { TooManyRequestsError } from '../../kernel/errors.js';

export interface RegistrationRateLimit {
  /** Registrations one client address may make per window. */
  perAddress: number;
  /** Registrations one network prefix (/24 IPv4, /64 IPv6) may make per window. */
  perPrefix: number;
  /** Registrations one IPv6 /48 (65,536 /64s) may make per window. */
  perIpv6Site: number;
  windowMs: number;
}

/** One counter a registration is counted in, with its limit and how a refusal names it. */
export interface Bucket {
  key: string;
  limit: number;
  what: string;
}

/**
 * Sliding windows counted in the database (so across nodes), one counter per client address, per
 * network prefix and, for IPv6, per /48, in the transaction that writes the agent: a registration that
 * fails for any reason (this limit included) leaves the counters as they were. Each counter is kept per
 * fixed window; a registration is admitted when this window's count plus the previous window's, weighted
 * by how much of the previous window the sliding window still covers, stays within the limit. Fixed
 * windows alone let twice the limit through around a boundary.
 */
/** What a limiter counts, and how its refusals say so: registrations unless told otherwise. */
export interface LimiterNaming {
  code:
    | 'REGISTRATION_RATE_LIMITED'
    | 'KEY_CHANGE_RATE_LIMITED'
    | 'IDENTITY_CLAIM_RATE_LIMITED'
    | 'REPORT_RATE_LIMITED';
  /** Plural, e.g. "registrations". */
  noun: string;
  /** Prefix of its counters' keys, so that another kind of write is counted apart from registrations. */
  keyPrefix: string;
}

const REGISTRATIONS: LimiterNaming = {
  code: 'REGISTRATION_RATE_LIMITED',
  noun: 'registrations',
  keyPrefix: '',
};

export class RegistrationLimiter {
  private forgottenBefore = 0;

  constructor(
    private readonly limit: RegistrationRateLimit,
    private readonly naming: LimiterNaming = REGISTRATIONS,
  ) {}

  /**
   * Counts a registration from `address` in `trx`, and in any `extra` counters (keyed under this
   * limiter's prefix); 429 with Retry-After when a limit is passed.
   */
  async admit(trx: Db, address: string, now: number, extra: readonly Bucket[] = []): Promise<void> {
    const { windowMs } = this.limit;
    const windowStart = Math.floor(now / windowMs) * windowMs;
    await this.forgetPastWindows(trx, windowStart - windowMs);
    const buckets = [...this.bucketsOf(address), ...extra].map((bucket) => ({
      ...bucket,
      key: `${this.naming.keyPrefix}${bucket.key}`,
    }));
    const keys = buckets.map((bucket) => bucket.key);
    const current = await countRegistration(trx, keys, windowStart);
    const previous = await registrationCountsIn(trx, keys, windowStart - windowMs);
    const covered = (windowStart + windowMs - now) / windowMs;
    let refused: { bucket: Bucket; retryAt: number } | undefined;
    buckets.forEach((bucket, index) => {
      const count = current[index] ?? 0;
      const before = previous.get(bucket.key) ?? 0;
      // The tolerance keeps the time admittedAt names admitted despite rounding.
      if (count + before * covered <= bucket.limit + 1e-9) return;
      const retryAt = admittedAt(bucket.limit, count, before, windowStart, windowMs, now);
      if (refused === undefined) refused = { bucket, retryAt };
      else refused.retryAt = Math.max(refused.retryAt, retryAt);
    });
    if (refused === undefined) return;
    const retryAfter = Math.max(1, Math.ceil((refused.retryAt - now) / 1000));
    throw new TooManyRequestsError(
      this.naming.code,
      `At most ${refused.bucket.limit} ${this.naming.noun} per ${windowMs / 1000} s from one ${refused.bucket.what}; try again in ${retryAfter} s`,
      retryAfter,
    );
  }

  private bucketsOf(given: string): Bucket[] {
    const { perAddress, perPrefix, perIpv6Site } = this.limit;
    const address = clientAddress(given);
    const prefix = networkPrefix(address);
    const site = ipv6SitePrefix(address);
    return [
      { key: `address:${address}`, limit: perAddress, what: `address (${address})` },
      { key: `prefix:${prefix}`, limit: perPrefix, what: `network (${prefix})` },
      ...(site === undefined ? [] : [{ key: `site:${site}`, limit: perIpv6Site, what: `network (${site})` }]),
    ];
  }

  /** Once per window on each node: counters of windows before `before` are deleted. */
  private async forgetPastWindows(trx: Db, before: number): Promise<void> {
    if (before <= this.forgottenBefore) return;
    this.forgottenBefore = before;
    await forgetRegistrationWindowsBefore(trx, before);
  }
}

/**
 * The earliest time a registration refused now would be admitted, with nothing else counted meanwhile:
 * later in this window as the previous window's weight falls, or else in the next window, where this
 * window's count (without the refused one, which is rolled back) is the previous one.
 */
function admittedAt(
  limit: number,
  count: number,
  previous: number,
  windowStart: number,
  windowMs: number,
  now: number,
): number {
  const inWindow = (attempt: number, before: number, start: number): number | undefined => {
    if (attempt > limit) return undefined;
    if (before === 0) return start;
    // attempt + before * covered <= limit once covered <= (limit - attempt) / before.
    return Math.max(start, Math.ceil(start + windowMs - ((limit - attempt) * windowMs) / before));
  };
  const at =
    inWindow(count, previous, windowStart) ??
    inWindow(1, count - 1, windowStart + windowMs) ??
    windowStart + 2 * windowMs;
  return Math.max(at, now);
}
