import { SearchIndex, type IndexedAgent } from '@agent-registry/search-index';
import type { Clock } from '../../kernel/clock.js';
import { shuttingDown } from '../../kernel/errors.js';
import type { Db } from '../../db/connect.js';
import { SearchIndexFollower } from '../search/search-follower.js';
import { readSearchRows } from '../search/agent-search-store.js';
import type { SearchRow, SearchSource } from '../search/search.js';
import { answeringEntryIds, readObserved, type EntryProbeRow } from './entry-probe-store.js';
import { homeView, observedView } from './observations.js';
import { readRemoteEntries, remoteEntriesChangedAfter, type RemoteEntryRow } from './remote-entries-store.js';

/** Remote changes read per query while loading or catching up. */
const BATCH = 2000;

/** Where the federated index stands, for the operator status. */
export interface FederatedIndexState {
  /** idle: not loaded (nothing federated at start, no federated search yet); loading; ready. */
  state: 'idle' | 'loading' | 'ready';
  /** Rows in the index: the registry's active agents and the active remote entries. */
  indexed: number;
  /** When the load ended (epoch ms). */
  loaded_at: number | null;
}

/**
 * The search source of scope=federated: one SearchIndex holding the registry's agents and the remote
 * entries together, so a federated search is the same search (filters, ranking, cursors) over more
 * rows. The registry's agents are followed by a SearchIndexFollower of its own, exactly as the local
 * index is; remote entries by their own change number (remote_entries.seq). Entry ids never begin with
 * `did:`, so they cannot collide with an agent's DID in the index.
 *
 * Loaded at start, in the background, when the registry has remote entries or sources (the context calls
 * `load`); otherwise on the first federated search. A federated search never reads a partly loaded index: it
 * waits for the load under way, as no search runs before the local index is loaded
 * (docs/decisions/federation.md). Each load fills a fresh index and swaps it in only when whole, so a load
 * that failed (the database went away meanwhile) is simply started again by the next caller.
 */
export class FederatedIndex implements SearchSource {
  /** The follower of the loaded index (an empty, unloaded one until the first load ends). */
  private agents: SearchIndexFollower;
  /** The last remote change (remote_entries.seq) applied to the loaded index. */
  private position = 0;
  private loading: Promise<void> | undefined;
  private loaded = false;
  private loadedAt: number | null = null;
  private catchingUp: Promise<void> | undefined;
  /** Aborted when the registry shuts down: the load stops and its waiters get a 503. */
  private readonly closing = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.agents = this.newFollower();
  }

  private newFollower(): SearchIndexFollower {
    const follower: SearchIndexFollower = new SearchIndexFollower(this.db, new SearchIndex(), () => {
      // A restore reloads the registry's agents into a fresh index: the remote entries go in again.
      if (follower === this.agents) this.position = 0;
    });
    return follower;
  }

  get follower(): SearchSource['follower'] {
    return this;
  }

  get index(): SearchIndex {
    return this.agents.index;
  }

  status(): FederatedIndexState {
    return {
      state: this.loaded ? 'ready' : this.loading === undefined ? 'idle' : 'loading',
      indexed: this.loaded ? this.agents.index.size : 0,
      loaded_at: this.loadedAt,
    };
  }

  /**
   * Loads the index (every active agent, then every remote entry), once: later and concurrent callers
   * share the load. A load that fails is forgotten, and the next caller starts a fresh one.
   */
  load(): Promise<void> {
    this.loading ??= this.fill().catch((error: unknown) => {
      this.loading = undefined;
      throw error;
    });
    return this.loading;
  }

  /**
   * Stops a load under way at shutdown: it and every search waiting for it end with 503
   * SHUTTING_DOWN instead of holding the shutdown, and no later load starts.
   */
  close(): void {
    this.closing.abort();
  }

  private async fill(): Promise<void> {
    const signal = this.closing.signal;
    const agents = this.newFollower();
    if (!signal.aborted) await agents.load(signal);
    const position = agents.ready ? await applyRemoteChanges(this.db, agents.index, 0, signal) : 0;
    if (signal.aborted || !agents.ready) {
      throw shuttingDown('This registry node is shutting down: retry the federated search on another node');
    }
    this.agents = agents;
    this.position = position;
    this.loaded = true;
    this.loadedAt = this.clock.now();
  }

  async catchUp(): Promise<void> {
    await this.load();
    await this.agents.catchUp();
    while (this.catchingUp !== undefined) await this.catchingUp;
    this.catchingUp = applyRemoteChanges(this.db, this.agents.index, this.position)
      .then((position) => {
        this.position = position;
      })
      .finally(() => {
        this.catchingUp = undefined;
      });
    await this.catchingUp;
  }

  async readRows(keys: readonly string[]): Promise<SearchRow[]> {
    const dids = keys.filter((key) => key.startsWith('did:'));
    const remoteIds = keys.filter((key) => !key.startsWith('did:'));
    const [local, remote, observations] = await Promise.all([
      readSearchRows(this.db, dids),
      readRemoteEntries(this.db, remoteIds),
      remoteIds.length === 0 ? [] : readObserved(this.db, remoteIds),
    ]);
    const probes = new Map(observations.map((row) => [row.entry_id, row]));
    const byKey = new Map<string, SearchRow>();
    for (const row of local) byKey.set(row.did, row);
    for (const row of remote)
      if (row.status === 'active') byKey.set(row.id, searchRow(row, probes.get(row.id)));
    return keys.flatMap((key) => byKey.get(key) ?? []);
  }

  /** Imported entries whose latest probe found them answering: available=true in a federated search. */
  availableKeys(): Promise<string[]> {
    return answeringEntryIds(this.db);
  }
}

/**
 * Applies the remote changes after `position` to `index`, yielding to the event loop between
 * batches; the position reached (where it stopped, if aborted).
 */
async function applyRemoteChanges(
  db: Db,
  index: SearchIndex,
  position: number,
  signal?: AbortSignal,
): Promise<number> {
  let reached = position;
  for (;;) {
    if (signal?.aborted === true) return reached;
    const rows = await remoteEntriesChangedAfter(db, reached, BATCH);
    for (const row of rows) index.apply(indexed(row));
    const last = rows.at(-1);
    if (last !== undefined) reached = Number(last.seq);
    if (rows.length < BATCH) return reached;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A remote entry as the index holds it: no reputation, reviews or service record here (reputation stays with
 * the registry that holds the reviews; docs/decisions/federation.md), so it ranks as an unreviewed agent.
 */
function indexed(row: RemoteEntryRow): IndexedAgent {
  return {
    did: row.id,
    name: row.name,
    description: row.description,
    capabilities: row.capabilities,
    tags: row.tags,
    status: row.status,
    reputation_score: 0,
    average_rating: 0,
    total_reviews: 0,
    created_at: Number(row.created_at),
  };
}

function searchRow(row: RemoteEntryRow, probe: EntryProbeRow | undefined): SearchRow {
  const observed = probe === undefined ? undefined : observedView(probe);
  const home = homeView(row, probe);
  return {
    did: row.did ?? row.id,
    name: row.name,
    description: row.description,
    capabilities: row.capabilities,
    tags: row.tags,
    reputation_score: 0,
    average_rating: 0,
    total_reviews: 0,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    status: 'active',
    // A remote entry has no place in this registry's change feed; renderings keyed by it (ARD) serve local agents only.
    change_seq: null,
    remote: {
      home_registry: row.home_registry,
      provenance: row.provenance,
      ...(observed === undefined ? {} : { observed }),
      ...(home === undefined ? {} : { home }),
    },
  };
}
