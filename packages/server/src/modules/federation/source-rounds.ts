import type { Db } from '../../db/connect.js';
import { updateSource } from './remote-entries-store.js';

/**
 * One round over the sources of one kind, one after another. A source's refresh records on its status
 * what the remote side did, and throws only for the unexpected (a defect, the database gone). Such a
 * failure goes on the source's status too, and the round goes on to the next source before rethrowing
 * it for the job's log: one source cannot keep the others from being followed.
 */
export async function refreshEach<T>(
  db: Db,
  sources: readonly T[],
  sourceId: (source: T) => string,
  refresh: (source: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const failures: unknown[] = [];
  for (const source of sources) {
    if (signal?.aborted === true) break;
    try {
      await refresh(source);
    } catch (error) {
      failures.push(error);
      const reason = error instanceof Error ? error.message : String(error);
      await updateSource(db, sourceId(source), {
        state: 'error',
        last_error: `unexpected failure (the registry's log has it): ${reason}`.slice(0, 1000),
      }).catch(() => undefined);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    throw new AggregateError(failures, `${failures.length} federation sources failed unexpectedly`);
  }
}

/**
 * Runs work one piece after another, in the order asked: a source kind's scheduled rounds, explicit
 * refreshes and an operator's resume never write at once. A piece that fails does not stop the next.
 */
export class OneAtATime {
  private last: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.last.then(work);
    this.last = result.catch(() => undefined);
    return result;
  }
}
