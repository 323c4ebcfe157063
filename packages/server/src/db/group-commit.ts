import { CompiledQuery } from 'kysely';
import type { Db, Dialect } from './connect.js';
import { isDatabaseUnavailable } from './errors.js';

/** Runs a unit of work in a transaction of its own, or in a savepoint of a transaction shared with others. */
export interface TransactionRunner {
  run<T>(work: (trx: Db) => Promise<T>): Promise<T>;
  /** The most units of work one commit has carried so far (tests check that grouping happened). */
  readonly largestGroup: number;
  /** Units of work given to `run` so far (tests wait until a burst of requests has reached it). */
  readonly received: number;
}

/** Units of work sharing one commit at most; a larger burst commits in several transactions. */
const MAX_GROUP = 64;

// Built once: each unit runs three of these, and Kysely's raw-SQL builder costs more than SQLite does.
const SAVEPOINT = CompiledQuery.raw('savepoint group_unit');
const RELEASE = CompiledQuery.raw('release savepoint group_unit');
const ROLLBACK = CompiledQuery.raw('rollback to savepoint group_unit');

interface Pending {
  work: (trx: Db) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit for SQLite's one writer: units of work that arrive while a transaction runs (or in the
 * same turn of the event loop) share the next transaction, each in a savepoint of its own, so that one
 * commit, one full-text segment and one write of each shared index page serve them all. A unit that
 * fails rolls back its savepoint only and fails alone; every unit is answered after the shared commit,
 * and if the commit fails, every unit fails. Work must only use `trx` (no waiting on anything else):
 * the whole group waits for each unit in turn.
 */
export class GroupCommit implements TransactionRunner {
  private queue: Pending[] = [];
  private draining = false;
  largestGroup = 0;
  received = 0;

  constructor(private readonly db: Db) {}

  run<T>(work: (trx: Db) => Promise<T>): Promise<T> {
    this.received += 1;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) {
        this.draining = true;
        // Requests parsed in this turn of the event loop join the first group.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, MAX_GROUP);
      this.largestGroup = Math.max(this.largestGroup, group.length);
      const outcomes = await this.commit(group);
      group.forEach((pending, index) => {
        const outcome = outcomes[index] as Outcome;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    }
    this.draining = false;
  }

  private async commit(group: Pending[]): Promise<Outcome[]> {
    const only = group.length === 1 ? group[0] : undefined;
    if (only !== undefined) {
      try {
        return [{ ok: true, value: await this.db.transaction().execute(only.work) }];
      } catch (error) {
        return [{ ok: false, error }];
      }
    }
    const outcomes: Outcome[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const pending of group) {
          await trx.executeQuery(SAVEPOINT);
          try {
            outcomes.push({ ok: true, value: await pending.work(trx) });
            await trx.executeQuery(RELEASE);
          } catch (error) {
            outcomes.push({ ok: false, error });
            // SQLite may have rolled the whole transaction back already (disk full, I/O error): the
            // savepoint is gone with it, and so is every unit's work, so the whole group fails.
            if (isDatabaseUnavailable(error)) throw error;
            await trx.executeQuery(ROLLBACK);
            await trx.executeQuery(RELEASE);
          }
        }
      });
    } catch (error) {
      // The shared commit (or a savepoint step) failed: nothing of the group was stored.
      return group.map((_, index) => {
        const outcome = outcomes[index];
        return outcome !== undefined && !outcome.ok ? outcome : { ok: false, error };
      });
    }
    return outcomes;
  }
}

/** A transaction per unit of work (PostgreSQL: concurrent transactions on a pool, each its own commit). */
export class TransactionPerUnit implements TransactionRunner {
  readonly largestGroup = 1;
  received = 0;

  constructor(private readonly db: Db) {}

  run<T>(work: (trx: Db) => Promise<T>): Promise<T> {
    this.received += 1;
    return this.db.transaction().execute(work);
  }
}

export function transactionRunner(db: Db, dialect: Dialect): TransactionRunner {
  return dialect === 'sqlite' ? new GroupCommit(db) : new TransactionPerUnit(db);
}
