import { PROFILE_LIMITS } from '@agent-registry/protocol';
import { createHash } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { FederationConfig } from '../../kernel/config.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { provenanceJson } from '../agents/provenance-schemas.js';
import { fetchRemote, RemoteFetchError } from './remote-fetch.js';
import { httpUrl, isStorableName, limitedDescription, limitedText, MAX_ENDPOINTS } from './listing-limits.js';
import { OneAtATime, refreshEach } from './source-rounds.js';
import {
  entryQuota,
  heldEntryIdsOfSource,
  putRemoteEntry,
  removeRemoteEntries,
  type EntryQuota,
  type RemoteEntryWrite,
} from './remote-entries-store.js';
import { ensureSource, readSource, updateSource } from './remote-sources-store.js';

export interface McpImportDeps {
  db: Db;
  clock: Clock;
  policy: WebhookNetworkPolicy;
  config: FederationConfig;
}

/** Servers asked per page, and the most pages one round reads (a registry that never ends is refused). */
const PAGE_SIZE = 100;
const MAX_PAGES = 2000;
/**
 * The longest cursor followed. Cursors are opaque but short (the official registry's are a name and a
 * version); a bound keeps a hostile registry from handing out a fresh megabyte per page.
 */
export const MAX_CURSOR_LENGTH = 1024;
const OFFICIAL = 'io.modelcontextprotocol.registry/official';

/** What a registry's source keeps between rounds: the newest updatedAt fully read. */
interface RegistryCursor {
  updated_since?: string;
  /** Complete rounds that read only changes since the last complete full read. */
  partial_rounds?: number;
  /** The last round's note on skipped servers: they are not read again until they change upstream. */
  skipped_note?: string;
}

class InvalidPageError extends Error {}

export const mcpSourceId = (base: string): string => `mcp:${base}`;
const entryId = (base: string, name: string): string => `mcp:${base}#${name}`;

/** How many skipped servers a source's status names; the rest are counted. */
const SKIPS_NAMED = 3;

/** A round's skipped servers: how many, and the reasons of the first SKIPS_NAMED (a round may read 2,000 pages). */
interface SkippedServers {
  count: number;
  reasons: string[];
}

/** Beyond a round's own length, how far back the next round reads again (clock rates, equal stamps). */
const ROUND_OVERLAP_MS = 60_000;

/**
 * The next round's updated_since: the newest updatedAt read, less the round's length and a minute. A
 * server changed during the round, on a page already read, has an updatedAt after the round began,
 * which is at least the newest read less the round's length (whatever the two clocks say); reading it
 * again is harmless (an unchanged entry is not written). Never earlier than the round's own.
 */
export function nextUpdatedSince(
  previous: string | undefined,
  newest: string | undefined,
  overlapMs: number,
): string | undefined {
  const newestMs = newest === undefined ? Number.NaN : Date.parse(newest);
  if (Number.isNaN(newestMs)) return newest ?? previous;
  const back = newestMs - overlapMs;
  const previousMs = previous === undefined ? Number.NaN : Date.parse(previous);
  return !Number.isNaN(previousMs) && back <= previousMs ? previous : new Date(back).toISOString();
}

/**
 * Imports servers from the MCP Registries the operator lists (FEDERATION_MCP_REGISTRIES), as the
 * registry's published OpenAPI describes `GET /v0.1/servers`: pages followed by `metadata.nextCursor`,
 * and after the first full read only what changed (`updated_since`, which also returns tombstones).
 * Each server's latest version is one entry (id `mcp:<base>#<name>`): its remotes are the entry's
 * endpoints; a `deleted` latest version removes the entry at once. Capabilities stay empty: server.json
 * does not list tools, and the registry claims none it does not know.
 *
 * A page that is not JSON or not a ServerList, an answer over the size limit or past the deadline, more
 * servers than the page asked for, a cursor longer than MAX_CURSOR_LENGTH or returned twice, or more
 * than MAX_PAGES pages ends the round with the reason on the source's status. One server that is not
 * the documented shape, or whose name or version holds a control character or a lone surrogate, is
 * skipped with its reason on the status: the servers after it are imported all the same. Its listed
 * text is cleaned as every remote entry's is (listing-limits.ts). What earlier pages said stays applied; the high-water mark moves only after a
 * whole round, so the next round reads the failed part again (writes of unchanged servers are no-ops).
 */
export class McpRegistryImporter {
  /** Rounds run one after another: the schedule's and an explicit refresh never write at once. */
  private readonly rounds = new OneAtATime();

  constructor(private readonly deps: McpImportDeps) {}

  refreshAll(signal?: AbortSignal): Promise<void> {
    return this.rounds.run(() =>
      refreshEach(
        this.deps.db,
        this.deps.config.mcpRegistries,
        mcpSourceId,
        (base, deadline) => this.refresh(base, deadline),
        signal,
        this.deps.config.sourceDeadlineMs,
      ),
    );
  }

  async refresh(base: string, signal?: AbortSignal): Promise<void> {
    const { db, clock } = this.deps;
    const id = mcpSourceId(base);
    await ensureSource(db, { id, kind: 'mcp', url: base });
    const source = await readSource(db, id);
    const cursor = (source?.cursor == null ? {} : JSON.parse(source.cursor)) as RegistryCursor;
    const started = clock.now();
    await updateSource(db, id, { last_attempt_at: started });
    // Changes only, except every FEDERATION_EXPIRE_AFTER_ROUNDS rounds: a full read, after which a
    // server the registry stopped listing without a tombstone goes away.
    const full =
      cursor.updated_since === undefined ||
      (cursor.partial_rounds ?? 0) + 1 >= this.deps.config.expireAfterRounds;
    const quota = await entryQuota(db, id, this.deps.config.maxEntriesPerMcpRegistry);
    try {
      const skipped: SkippedServers = { count: 0, reasons: [] };
      const seen = full ? new Set<string>() : undefined;
      const newest = await this.readChanges(
        base,
        full ? undefined : cursor.updated_since,
        { skipped, quota, listed: seen },
        signal,
      );
      let expired = 0;
      if (seen !== undefined) {
        const gone = (await heldEntryIdsOfSource(db, id)).filter((entry) => !seen.has(entry));
        expired = gone.length;
        await removeRemoteEntries(db, gone, clock.now(), quota);
      }
      const overlapMs = clock.now() - started + ROUND_OVERLAP_MS;
      // Skipped servers are not read again until they change: their note stays until another replaces it.
      const skippedNoteNow = skippedNote(skipped, started) ?? cursor.skipped_note;
      const notes = [
        ...(skippedNoteNow === undefined ? [] : [skippedNoteNow]),
        ...(quota.refused === 0
          ? []
          : [
              `${quota.refused} servers refused: this registry's source holds FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY (${quota.max}) entries`,
            ]),
        ...(expired === 0 ? [] : [`${expired} entries no longer listed by the full read were removed`]),
      ];
      await updateSource(db, id, {
        state: 'ok',
        last_error: notes.length === 0 ? null : notes.join('; '),
        last_success_at: clock.now(),
        cursor: JSON.stringify({
          updated_since: nextUpdatedSince(cursor.updated_since, newest, overlapMs),
          partial_rounds: full ? 0 : (cursor.partial_rounds ?? 0) + 1,
          ...(skippedNoteNow === undefined ? {} : { skipped_note: skippedNoteNow }),
        } satisfies RegistryCursor),
      });
    } catch (error) {
      if (!(error instanceof RemoteFetchError || error instanceof InvalidPageError)) throw error;
      await updateSource(db, id, { state: 'error', last_error: error.message.slice(0, 1000) });
    }
  }

  /** Reads every page of changes; returns the newest updatedAt seen. Skipped servers go in `round.skipped`. */
  private async readChanges(
    base: string,
    updatedSince: string | undefined,
    round: {
      /** The servers skipped, counted as pages are read (the first few with their reasons). */
      skipped: SkippedServers;
      quota: EntryQuota;
      /** On a full read: the ids listed so far, filled as pages are read. */
      listed: Set<string> | undefined;
    },
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    const { config, policy } = this.deps;
    const { skipped, quota, listed } = round;
    const limits = { timeoutMs: config.fetchTimeoutMs, maxResponseBytes: config.maxResponseBytes };
    // Loop detection needs only to recognise a cursor again: a digest of each, not the cursor itself.
    const seen = new Set<string>();
    let newest = updatedSince;
    let next: string | undefined;
    for (let page = 0; ; page += 1) {
      if (page >= MAX_PAGES)
        throw new InvalidPageError(`${base} kept returning pages past ${MAX_PAGES} in one round: refused`);
      const url = new URL(`${base}/v0.1/servers`);
      url.searchParams.set('limit', String(PAGE_SIZE));
      if (updatedSince !== undefined) url.searchParams.set('updated_since', updatedSince);
      if (next !== undefined) url.searchParams.set('cursor', next);
      const response = await fetchRemote(policy, url, {}, limits, signal);
      if (response.status !== 200)
        throw new RemoteFetchError(`${url.href} answered ${response.status}; entries are kept as last read`);
      const body = parsePage(url, response.body);
      skipped.count += body.skipped.length;
      skipped.reasons.push(...body.skipped.slice(0, Math.max(0, SKIPS_NAMED - skipped.reasons.length)));
      if (body.servers.length > PAGE_SIZE)
        throw new InvalidPageError(
          `${url.href} answered ${body.servers.length} servers to a request for at most ${PAGE_SIZE}: refused`,
        );
      const { upserts, removals, newestHere } = this.mapPage(base, body.servers);
      const now = this.deps.clock.now();
      for (const entry of upserts) {
        // A full read counts what it lists, old or new: what lies beyond the cap is refused here and
        // goes with the unlisted at the end, so the source holds at most the cap again.
        if (listed !== undefined && !listed.has(entry.id) && listed.size >= quota.max) {
          quota.refused += 1;
          continue;
        }
        const written = await putRemoteEntry(
          this.deps.db,
          entry,
          now,
          listed === undefined ? quota : undefined,
        );
        if (written !== 'refused') listed?.add(entry.id);
      }
      await removeRemoteEntries(this.deps.db, removals, now, quota);
      if (newestHere !== undefined && (newest === undefined || newestHere > newest)) newest = newestHere;
      const cursor = body.nextCursor;
      if (cursor === undefined || cursor === '') return newest;
      if (cursor.length > MAX_CURSOR_LENGTH)
        throw new InvalidPageError(
          `${url.href}: metadata.nextCursor has ${cursor.length} characters, more than ${MAX_CURSOR_LENGTH}: refused`,
        );
      const digest = createHash('sha256').update(cursor).digest('base64');
      if (seen.has(digest))
        throw new InvalidPageError(
          `${base} returned the cursor ${JSON.stringify(cursor.slice(0, 100))} twice (a cursor loop): refused`,
        );
      seen.add(digest);
      next = cursor;
    }
  }

  private mapPage(
    base: string,
    servers: PageServer[],
  ): { upserts: RemoteEntryWrite[]; removals: string[]; newestHere: string | undefined } {
    const upserts: RemoteEntryWrite[] = [];
    const removals: string[] = [];
    let newestHere: string | undefined;
    for (const item of servers) {
      const official = item.official;
      if (official?.updatedAt !== undefined && (newestHere === undefined || official.updatedAt > newestHere))
        newestHere = official.updatedAt;
      // Older versions come and go as the latest changes; only the latest speaks for the server.
      if (official?.isLatest === false) continue;
      const id = entryId(base, item.server.name);
      if (official?.status === 'deleted') {
        removals.push(id);
        continue;
      }
      const name = item.server.name;
      // A URL with template variables needs values the registry does not have: not an endpoint.
      const endpoints = item.server.remotes.flatMap((remote) => {
        const url = /^https?:\/\/[^\s{}]+$/.test(remote.url) ? httpUrl(remote.url) : undefined;
        return url === undefined ? [] : [{ type: 'mcp', url }];
      });
      upserts.push({
        id,
        source_id: mcpSourceId(base),
        kind: 'imported',
        did: null,
        name:
          limitedText(item.server.title, PROFILE_LIMITS.nameMaxLength) ??
          limitedText(name, PROFILE_LIMITS.nameMaxLength) ??
          name,
        description: limitedDescription(item.server.description, PROFILE_LIMITS.descriptionMaxLength) ?? null,
        capabilities: '[]',
        tags: JSON.stringify(official?.status === 'deprecated' ? ['mcp', 'deprecated'] : ['mcp']),
        endpoints: JSON.stringify(endpoints.slice(0, MAX_ENDPOINTS)),
        home_registry: base,
        provenance: provenanceJson({
          kind: 'imported',
          home_registry: base,
          source_url: `${base}/v0.1/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(item.server.version)}`,
          format: 'mcp-registry',
          verification: 'unsigned',
          fetched_at: this.deps.clock.now(),
        }),
      });
    }
    return { upserts, removals, newestHere };
  }
}

interface PageServer {
  server: { name: string; title?: string; description: string; version: string; remotes: { url: string }[] };
  official?: { status?: string; updatedAt?: string; isLatest?: boolean };
}

/** The source's note on servers a round skipped: when, the first few reasons and how many in all. */
function skippedNote(skipped: SkippedServers, roundAt: number): string | undefined {
  if (skipped.count === 0) return undefined;
  const more =
    skipped.count > skipped.reasons.length ? `; and ${skipped.count - skipped.reasons.length} more` : '';
  return `the round of ${new Date(roundAt).toISOString()} skipped ${skipped.count} server(s), the others were imported: ${skipped.reasons.join('; ')}${more}`;
}

/**
 * A ServerList page, checked against the documented shape: a page that is not one is refused; a server
 * that is not one is skipped with its reason, so it never keeps the servers after it from being read.
 */
function parsePage(
  url: URL,
  bytes: Buffer,
): { servers: PageServer[]; skipped: string[]; nextCursor?: string } {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new InvalidPageError(`${url.href} did not answer JSON: refused`);
  }
  const list = body as { servers?: unknown; metadata?: { nextCursor?: unknown } };
  if (typeof body !== 'object' || body === null || !Array.isArray(list.servers))
    throw new InvalidPageError(
      `${url.href} did not answer a ServerList (an object with a servers array): refused`,
    );
  const nextCursor = list.metadata?.nextCursor;
  if (nextCursor !== undefined && nextCursor !== null && typeof nextCursor !== 'string')
    throw new InvalidPageError(`${url.href}: metadata.nextCursor is not a string: refused`);
  const skipped: string[] = [];
  const servers = list.servers.flatMap((raw, index): PageServer[] => {
    const item = raw as { server?: Record<string, unknown>; _meta?: Record<string, unknown> } | null;
    const server = item?.server;
    if (
      typeof server !== 'object' ||
      server === null ||
      typeof server.name !== 'string' ||
      server.name.length > 200 ||
      typeof server.description !== 'string' ||
      typeof server.version !== 'string'
    ) {
      skipped.push(`${url.href}: servers[${index}] lacks server.name, description or version`);
      return [];
    }
    if (!isStorableName(server.name) || !isStorableName(server.version)) {
      skipped.push(
        `${url.href}: servers[${index}] ${JSON.stringify(server.name.slice(0, 100))} has a control character or a lone surrogate in its name or version`,
      );
      return [];
    }
    const remotes = Array.isArray(server.remotes)
      ? server.remotes.flatMap((remote: unknown) => {
          const target = (remote as { url?: unknown } | null)?.url;
          return typeof target === 'string' && target.length <= PROFILE_LIMITS.urlMaxLength
            ? [{ url: target }]
            : [];
        })
      : [];
    const official = item?._meta?.[OFFICIAL] as PageServer['official'] | undefined;
    const parsed: PageServer = {
      server: {
        name: server.name,
        ...(typeof server.title === 'string' ? { title: server.title } : {}),
        description: server.description,
        version: server.version,
        remotes,
      },
      ...(typeof official === 'object' && official !== null
        ? {
            official: {
              ...(typeof official.status === 'string' ? { status: official.status } : {}),
              ...(typeof official.updatedAt === 'string' ? { updatedAt: official.updatedAt } : {}),
              ...(typeof official.isLatest === 'boolean' ? { isLatest: official.isLatest } : {}),
            },
          }
        : {}),
    };
    return [parsed];
  });
  return { servers, skipped, ...(typeof nextCursor === 'string' ? { nextCursor } : {}) };
}
