import type { Capability } from '@agent-registry/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { ApiError, NotFoundError } from '../../kernel/errors.js';
import type { Provenance } from '../agents/provenance-schemas.js';
import {
  activeRemoteEntriesByDid,
  listRemoteEntries,
  readRemoteEntry,
  type RemoteEntryRow,
} from './remote-entries-store.js';
import { readSources } from './remote-sources-store.js';
import type { FederatedIndex } from './federated-index.js';
import type { ObservationService } from './observations.js';
import type { EntryProbeRow } from './entry-probe-store.js';
import { homeView, observedView } from './observations.js';
import type { SourceRefresher } from './federation-jobs.js';
import type { PeerFollower } from './peer-follower.js';
import { peerSourceId } from './peer-entries.js';
import { peerCursorStatus } from './peer-status.js';
import type { FederationStatus, RemoteEntriesPage, RemoteEntriesQuery, RemoteEntry } from './schemas.js';
import { FEDERATION_RULES } from './schemas.js';

export interface FederationDeps {
  db: Db;
  clock: Clock;
  index: FederatedIndex;
  /** The configured importers and peer followers. */
  sources: readonly SourceRefresher[];
  /** The peer follower, for the operator's resume of a stopped peer. */
  peers: PeerFollower;
  /** What the probes of imported entries found. */
  observations: ObservationService;
}

/** The read side of federation: remote entries, referrals for invocations, and the sources' status. */
export class FederationService {
  constructor(private readonly deps: FederationDeps) {}

  /** Every configured source now, as the schedule would (tests and the operator's refresh). */
  async refresh(signal?: AbortSignal): Promise<void> {
    for (const source of this.deps.sources) await source.refreshAll(signal);
  }

  /** The operator resumes a stopped peer (PeerFollower.resume); answers the peer's status after it. */
  async resumePeer(peer: string, by: string): Promise<FederationStatus['sources'][number]> {
    const origin = URL.canParse(peer) ? new URL(peer).origin : peer;
    await this.deps.peers.resume(origin, by);
    const status = await this.status();
    return status.sources.find(
      (source) => source.id === peerSourceId(origin),
    ) as FederationStatus['sources'][number];
  }

  async entry(id: string): Promise<RemoteEntry> {
    const row = await readRemoteEntry(this.deps.db, id);
    if (row?.status === 'suspended')
      throw new NotFoundError(
        'REMOTE_ENTRY_NOT_FOUND',
        `${JSON.stringify(id.slice(0, 200))} was suspended by this registry's operator; GET /api/moderation?target=<this id> says why and when`,
      );
    if (row === undefined || row.status !== 'active') {
      throw new NotFoundError(
        'REMOTE_ENTRY_NOT_FOUND',
        `no remote entry has the id ${JSON.stringify(id.slice(0, 200))}; ids come from search results with scope=federated or from GET /api/federation/entries`,
      );
    }
    const probes = await this.deps.observations.probes([row.id]);
    return entryView(row, probes.get(row.id));
  }

  async entries(query: RemoteEntriesQuery): Promise<RemoteEntriesPage> {
    const limit = query.limit ?? FEDERATION_RULES.listLimitDefault;
    const { rows, resumeAfter } = await listRemoteEntries(this.deps.db, {
      sourceId: query.source,
      kind: query.kind,
      verification: query.verification,
      after: query.after,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const probes = await this.deps.observations.probes(page.map((row) => row.id));
    return {
      entries: page.map((row) => entryView(row, probes.get(row.id))),
      next_after: rows.length > limit ? (page.at(-1)?.id ?? null) : (resumeAfter ?? null),
    };
  }

  /**
   * For a DID that has no active agent here: the referral to the registry it lives at, when a remote
   * entry names it. 404 as for any agent not registered here (the interface's meaning of the status),
   * with its own code and the home registry and invocation URL in the body: never a silent forward.
   */
  async referral(did: string): Promise<ApiError | undefined> {
    const [row] = await activeRemoteEntriesByDid(this.deps.db, did);
    if (row === undefined) return undefined;
    const endpoints = JSON.parse(row.endpoints) as RemoteEntry['endpoints'];
    const invoke =
      endpoints.find((endpoint) => endpoint.type === 'invoke') ??
      endpoints.find((endpoint) => endpoint.type === 'a2a') ??
      endpoints.find((endpoint) => endpoint.type === 'mcp') ??
      endpoints[0];
    const where = invoke?.url ?? row.home_registry;
    return new ApiError(
      404,
      'AGENT_IS_REMOTE',
      'Agent lives at another registry',
      `${did} is not registered here: it is listed from ${row.home_registry} (${(JSON.parse(row.provenance) as Provenance).kind}); invoke it there, at ${where}`,
      {},
      { home_registry: row.home_registry, invoke_url: where, remote_entry: row.id },
    );
  }

  /**
   * The sources' status: `operator` adds each source's last error and resume record, which may quote
   * what remote hosts answered; `public` is the summary without them.
   */
  async status(view: 'public' | 'operator' = 'operator'): Promise<FederationStatus> {
    const sources = await readSources(this.deps.db);
    const counts = await this.deps.db
      .selectFrom('remote_entries')
      .select(['source_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('status', '=', 'active')
      .groupBy('source_id')
      .execute();
    const bySource = new Map(counts.map((row) => [row.source_id, Number(row.n)]));
    return {
      view,
      sources: sources.map((source) => {
        const { checkpoint, resumed } = source.kind === 'peer' ? peerCursorStatus(source.cursor) : {};
        return {
          id: source.id,
          kind: source.kind,
          url: source.url,
          state: source.state,
          ...(view === 'operator' ? { last_error: source.last_error } : {}),
          last_attempt_at: source.last_attempt_at === null ? null : Number(source.last_attempt_at),
          last_success_at: source.last_success_at === null ? null : Number(source.last_success_at),
          entries: bySource.get(source.id) ?? 0,
          ...(checkpoint === undefined ? {} : { checkpoint }),
          ...(view === 'operator' && resumed !== undefined ? { resumed } : {}),
        };
      }),
      search_index: this.deps.index.status(),
    };
  }
}

export function entryView(row: RemoteEntryRow, probe?: EntryProbeRow): RemoteEntry {
  const observed = probe === undefined ? undefined : observedView(probe);
  const home = homeView(row, probe);
  return {
    id: row.id,
    did: row.did,
    name: row.name,
    description: row.description,
    capabilities: JSON.parse(row.capabilities) as Capability[],
    tags: JSON.parse(row.tags) as string[],
    endpoints: JSON.parse(row.endpoints) as RemoteEntry['endpoints'],
    status: 'active',
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    home_registry: row.home_registry,
    provenance: JSON.parse(row.provenance) as Provenance,
    ...(observed === undefined ? {} : { observed }),
    ...(home === undefined ? {} : { home }),
  };
}
