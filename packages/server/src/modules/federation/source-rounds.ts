import type { Db } from '../../db/connect.js';
import { readSources, updateSource } from './remote-sources-store.js';

/** Why a source's refresh was cut: its deadline in the round (the signal's reason, named in its status). */
export class SourceDeadlineError extends Error {
  constructor(deadlineMs: number) {
    super(
      `the source's refresh was cut at its deadline of ${deadlineMs / 1000} s in the round (FEDERATION_SOURCE_DEADLINE_SECONDS); the next round resumes it`,
    );
    this.name = 'SourceDeadlineError';
  }
}

/**
 * One round over the sources of one kind, one after another, those attempted least recently first (a
 * source cut by its deadline never keeps the ones after it from their turn in the next round). Each
 * source's refresh gets a signal that ends at `deadlineMs`. A source's refresh records on its status
 * what the remote side did, and throws only for the unexpected (a defect, the database gone). Such a
 * failure goes on the source's status too, and the round goes on to the next source before rethrowing
 * it for the job's log: one source cannot keep the others from being followed.
 */
export async function refreshEach<T>(
  db: Db,
  sources: readonly T[],
  sourceId: (source: T) => string,
  refresh: (source: T, signal: AbortSignal) => Promise<void>,
  signal?: AbortSignal,
  deadlineMs?: number,
): Promise<void> {
  const failures: unknown[] = [];
  const attempted = new Map(
    (await readSources(db)).map((row) => [row.id, Number(row.last_attempt_at ?? -1)]),
  );
  const ordered = [...sources].sort(
    (a, b) => (attempted.get(sourceId(a)) ?? -1) - (attempted.get(sourceId(b)) ?? -1),
  );
  for (const source of ordered) {
    if (signal?.aborted === true) break;
    const deadline = new AbortController();
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => deadline.abort(new SourceDeadlineError(deadlineMs)), deadlineMs);
    timer?.unref();
    try {
      await refresh(
        source,
        signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]),
      );
    } catch (error) {
      failures.push(error);
      const reason = error instanceof Error ? error.message : String(error);
      await updateSource(db, sourceId(source), {
        state: 'error',
        last_error: `unexpected failure (the registry's log has it): ${reason}`.slice(0, 1000),
      }).catch(() => undefined);
    } finally {
      clearTimeout(timer);
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
