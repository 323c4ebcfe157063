import type { Db } from '../../db/connect.js';
import { NotFoundError } from '../../kernel/errors.js';
import {
  answeringEntryIds,
  listObservations,
  readObserved,
  type EntryChange,
  type EntryProbeRow,
} from './entry-probe-store.js';
import {
  OBSERVATION_RULES,
  type Observed,
  type ObservationsPage,
  type ObservationsQuery,
} from './observation-schemas.js';
import { readRemoteEntry, type RemoteEntryRow } from './remote-entries-store.js';
import { withLive, type HomeReport } from '../search/home-report-schema.js';

export type { EntryChange } from './entry-probe-store.js';

/** Called after each stored change of an entry's status class or tools digest. */
export type EntryChangeListener = (change: EntryChange) => void;

/**
 * What the probes of imported entries found (docs/federation.md, "Observed"): the latest observation of
 * each entry, its history of changes, and the hook through which watchers hear of them.
 */
export class ObservationService {
  private readonly listeners = new Set<EntryChangeListener>();

  constructor(private readonly db: Db) {}

  /** Subscribes to changes of status class (`status_changed`) and tools digest (`tools_changed`); returns the unsubscribe. */
  onEntryChange(listener: EntryChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The prober's report of stored changes: each listener hears each, and one's fault spares the rest. */
  notify(changes: readonly EntryChange[], onError: (error: unknown) => void): void {
    for (const change of changes)
      for (const listener of this.listeners) {
        try {
          listener(change);
        } catch (error) {
          onError(error);
        }
      }
  }

  /** The latest probe of each of `ids` that was probed, by id (observedView and homeView read it). */
  async probes(ids: readonly string[]): Promise<Map<string, EntryProbeRow>> {
    const rows = ids.length === 0 ? [] : await readObserved(this.db, ids);
    return new Map(rows.map((row) => [row.entry_id, row]));
  }

  /** Ids of the active entries whose latest probe found them answering. */
  answering(): Promise<string[]> {
    return answeringEntryIds(this.db);
  }

  /** The changes observed of an entry, newest first, with the log leaf of each. */
  async history(entryId: string, query: ObservationsQuery): Promise<ObservationsPage> {
    const entry = await readRemoteEntry(this.db, entryId);
    if (entry === undefined || entry.status !== 'active') {
      throw new NotFoundError(
        'REMOTE_ENTRY_NOT_FOUND',
        `no remote entry has the id ${JSON.stringify(entryId.slice(0, 200))}; ids come from search results with scope=federated or from GET /api/federation/entries`,
      );
    }
    const limit = query.limit ?? OBSERVATION_RULES.listLimitDefault;
    const before = query.cursor === undefined ? undefined : Number(query.cursor);
    const { rows, firstSeq } = await listObservations(this.db, entryId, before, limit + 1);
    const page = rows.slice(0, limit);
    return {
      observations: page.map((row) => ({
        observed_at: Number(row.observed_at),
        status: row.status,
        tools_count: row.tools_count === null ? null : Number(row.tools_count),
        tools_digest: row.tools_digest,
        log_seq: Number(row.log_seq),
        log_index: Number(row.log_seq) - firstSeq,
      })),
      next_cursor: rows.length > limit ? String(page.at(-1)?.log_seq ?? '') : null,
    };
  }
}

/** An entry's row as the API shows it; undefined before its first probe. */
export function observedView(row: EntryProbeRow): Observed | undefined {
  if (row.status === null || row.checked_at === null || row.first_seen_at === null) return undefined;
  const time = (value: number | null): number | null => (value === null ? null : Number(value));
  return {
    status: row.status,
    checked_at: Number(row.checked_at),
    last_answered_at: time(row.last_answered_at),
    first_seen_at: Number(row.first_seen_at),
    tools_count: time(row.tools_count),
    tools_digest: row.tools_digest,
    tools_changed_at: time(row.tools_changed_at),
  };
}

/**
 * A mirrored entry's `home`: the figures its home's verified log carried, with what the latest read of
 * the home's API found (availability, service record); undefined without figures from the log.
 */
export function homeView(entry: RemoteEntryRow, probe: EntryProbeRow | undefined): HomeReport | undefined {
  if (entry.home_report === null) return undefined;
  const readAt = probe?.last_answered_at ?? null;
  return withLive(
    JSON.parse(entry.home_report) as HomeReport,
    probe?.home_live ?? null,
    readAt === null ? null : Number(readAt),
  );
}
