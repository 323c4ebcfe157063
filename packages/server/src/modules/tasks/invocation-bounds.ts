import type { Db } from '../../db/connect.js';
import { clientAddress, ipv6SitePrefix, networkPrefix } from '../../kernel/client-networks.js';
import type { TaskBoundsConfig } from '../../kernel/config.js';
import { ServiceUnavailableError, TooManyRequestsError } from '../../kernel/errors.js';
import { countClientInput, countInvocation } from './invocation-quota-store.js';
import { openInputBytesTotal, openTaskLoads } from './open-task-loads-store.js';

/** How long a node trusts its read of the registry's open input bytes before reading it again. */
const OPEN_INPUT_READ_EVERY_MS = 1000;
/** What a refusal for a full registry asks callers to wait: open tasks end within their deadline. */
const STORAGE_FULL_RETRY_SECONDS = 30;

/**
 * The input bytes all open tasks of the registry hold, read from the database at most once a second
 * per node (a sum over every open task is too dear for each invocation), plus what this node admitted
 * since. Other nodes' admissions of the last second are not seen: the cap may be passed by that much.
 */
class RegistryOpenInput {
  private readAt = -Infinity;
  private total = 0;
  private addedSinceRead = 0;
  private reading: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  async current(now: number): Promise<number> {
    if (now - this.readAt >= OPEN_INPUT_READ_EVERY_MS) {
      this.reading ??= this.read(now).finally(() => (this.reading = undefined));
      await this.reading;
    }
    return this.total + this.addedSinceRead;
  }

  added(bytes: number): void {
    this.addedSinceRead += bytes;
  }

  private async read(now: number): Promise<void> {
    const addedBefore = this.addedSinceRead;
    this.total = await openInputBytesTotal(this.db, now);
    // Admissions during the read may be in the sum too: counted twice until the next read, never missed.
    this.addedSinceRead -= addedBefore;
    this.readAt = now;
  }
}

/**
 * What an invocation may take of the registry before its task is created: the registry-wide room for
 * open input, the caller's rate and open tasks, the client address's and networks' input, and the
 * target's open tasks.
 */
export class InvocationBounds {
  private readonly openInput: RegistryOpenInput;

  constructor(
    db: Db,
    private readonly bounds: TaskBoundsConfig,
  ) {
    this.openInput = new RegistryOpenInput(db);
  }

  /** Input this node just stored in a task, counted until the next read of the total. */
  admitted(inputBytes: number): void {
    this.openInput.added(inputBytes);
  }

  /**
   * The registry-wide cap on open tasks' input (TASK_MAX_OPEN_MB_TOTAL): past it the registry stores no
   * more input until tasks end, whoever calls. A 503, not a 429: the caller did nothing wrong.
   */
  async assertRegistryHasRoom(inputBytes: number, now: number): Promise<void> {
    const max = this.bounds.maxOpenBytesTotal;
    const held = await this.openInput.current(now);
    if (held + inputBytes <= max) return;
    throw new ServiceUnavailableError(
      'TASK_STORAGE_FULL',
      `The registry's open tasks hold ${mib(held)} of input, and it keeps at most ${mib(max)} for all callers together; no task was created. Retry in ${STORAGE_FULL_RETRY_SECONDS} s, as open tasks end`,
      STORAGE_FULL_RETRY_SECONDS,
    );
  }

  /**
   * The caller's rate (invocations and input bytes per window), the input sent from the caller's client
   * address and networks (every agent calling from there together), and what the caller and the target
   * hold open. The caller's count is one upsert that, on PostgreSQL, locks the caller's window row until the
   * transaction ends, so the caller's limits hold across nodes; the target's open count is read without a
   * lock and may be passed by the invocations other callers make at the same moment.
   */
  async assertWithinBounds(
    trx: Db,
    callerDid: string,
    address: string,
    targetDid: string,
    inputBytes: number,
    now: number,
  ): Promise<void> {
    const bounds = this.bounds;
    const window = bounds.invokeRateWindowMs;
    const windowStart = now - (now % window);
    const sent = await countInvocation(trx, callerDid, windowStart, inputBytes);
    const windowSeconds = window / 1000;
    const nextWindow = Math.max(1, Math.ceil((windowStart + window - now) / 1000));
    if (sent.invocations > bounds.invokeRateLimit) {
      throw new TooManyRequestsError(
        'INVOCATION_RATE_LIMITED',
        `At most ${bounds.invokeRateLimit} invocations per caller per ${windowSeconds} s; try again in ${nextWindow} s`,
        nextWindow,
      );
    }
    if (sent.payloadBytes > bounds.invokeRateBytes) {
      throw new TooManyRequestsError(
        'INVOCATION_RATE_LIMITED',
        `At most ${mib(bounds.invokeRateBytes)} of input per caller per ${windowSeconds} s; try again in ${nextWindow} s`,
        nextWindow,
      );
    }
    await this.assertClientWithinRate(trx, address, windowStart, inputBytes, now);
    const { caller: mine, target: theirs } = await openTaskLoads(trx, callerDid, targetDid, now);
    if (mine.tasks >= bounds.maxOpenPerCaller || mine.bytes + inputBytes > bounds.maxOpenBytesPerCaller) {
      throw new TooManyRequestsError(
        'TOO_MANY_OPEN_TASKS',
        `You have ${mine.tasks} open tasks holding ${mib(mine.bytes)} of input; a caller may have at most ${bounds.maxOpenPerCaller} open, holding at most ${mib(bounds.maxOpenBytesPerCaller)}. Wait for one to end`,
        1,
      );
    }
    if (theirs.tasks >= bounds.maxOpenPerTarget || theirs.bytes + inputBytes > bounds.maxOpenBytesPerTarget) {
      throw new TooManyRequestsError(
        'TOO_MANY_OPEN_TASKS',
        `${targetDid} has ${theirs.tasks} open tasks holding ${mib(theirs.bytes)} of input; an agent may have at most ${bounds.maxOpenPerTarget} open, holding at most ${mib(bounds.maxOpenBytesPerTarget)}. Retry later`,
        1,
      );
    }
  }

  /**
   * Input bytes per window from one client address and from each of its networks (/24 IPv4; /64 and /48
   * IPv6), whichever agents send them: registering more agents from one place brings no more quota.
   */
  private async assertClientWithinRate(
    trx: Db,
    given: string,
    windowStart: number,
    inputBytes: number,
    now: number,
  ): Promise<void> {
    const { invokeRateBytesPerAddress, invokeRateBytesPerNetwork, invokeRateWindowMs } = this.bounds;
    const address = clientAddress(given);
    const site = ipv6SitePrefix(address);
    const buckets = [
      { key: `address:${address}`, max: invokeRateBytesPerAddress, what: `client address (${address})` },
      {
        key: `network:${networkPrefix(address)}`,
        max: invokeRateBytesPerNetwork,
        what: `network (${networkPrefix(address)})`,
      },
      ...(site === undefined
        ? []
        : [{ key: `network:${site}`, max: invokeRateBytesPerNetwork, what: `network (${site})` }]),
    ];
    const sent = await countClientInput(
      trx,
      buckets.map((bucket) => bucket.key),
      windowStart,
      inputBytes,
    );
    const over = buckets.find((bucket) => (sent.get(bucket.key) ?? 0) > bucket.max);
    if (over === undefined) return;
    const nextWindow = Math.max(1, Math.ceil((windowStart + invokeRateWindowMs - now) / 1000));
    throw new TooManyRequestsError(
      'INVOCATION_RATE_LIMITED',
      `At most ${mib(over.max)} of input per ${invokeRateWindowMs / 1000} s from one ${over.what}, shared by every agent calling from there; try again in ${nextWindow} s`,
      nextWindow,
    );
  }
}

const mib = (bytes: number): string => `${Math.round((bytes / 2 ** 20) * 100) / 100} MiB`;
