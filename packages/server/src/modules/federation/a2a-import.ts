import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { FederationConfig } from '../../kernel/config.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { provenanceJson, type Provenance } from '../agents/provenance-schemas.js';
import { readAgentCard, InvalidCardError } from './a2a-card.js';
import { readFile } from 'node:fs/promises';
import { verifyCardSignatures, type TrustRoot } from './card-signatures.js';
import { fetchRemote, maxAgeSeconds, RemoteFetchError, type FetchLimits } from './remote-fetch.js';
import { OneAtATime, refreshEach } from './source-rounds.js';
import { putRemoteEntry, removeRemoteEntries } from './remote-entries-store.js';
import { ensureSource, readSource, updateSource } from './remote-sources-store.js';

export interface A2aImportDeps {
  db: Db;
  clock: Clock;
  policy: WebhookNetworkPolicy;
  config: FederationConfig;
}

/** What a card's source keeps between fetches. */
export interface CardCursor {
  etag?: string;
  /** Epoch ms before which Cache-Control says the card is fresh. */
  fresh_until?: number;
}

export const cardSourceId = (url: string): string => `a2a:${url}`;

/**
 * The longest a card's Cache-Control may put off its next fetch. A day, not the refresh interval:
 * rounds run once per interval anyway, so a cap there would make max-age mean nothing; a day bounds how
 * long a changed or removed card goes unseen (docs/decisions/federation.md, "A card's freshness is capped").
 */
export const MAX_CARD_FRESHNESS_SECONDS = 24 * 60 * 60;

/**
 * Until when a stored cursor says the card is fresh: undefined (fetch now) when it says nothing
 * usable, or a time further ahead than any fetch could have set (a cursor written before the cap, or
 * by hand): such a card is fetched again at once rather than trusted.
 */
export function storedFreshUntil(cursor: CardCursor, now: number): number | undefined {
  const until = cursor.fresh_until;
  if (typeof until !== 'number' || !Number.isFinite(until)) return undefined;
  return until > now + MAX_CARD_FRESHNESS_SECONDS * 1000 ? undefined : until;
}

/**
 * Imports the A2A agent cards the operator lists (FEDERATION_A2A_CARDS): each is fetched through the
 * webhook network policy with If-None-Match and kept fresh as its Cache-Control allows, validated,
 * its signatures verified against the card domain's did:web document, and stored as one remote entry
 * (id `a2a:<card URL>`). A card that answers 404 or 410 has its entry removed; any other failure keeps
 * the entry and records the reason on the source (GET /api/federation/status).
 */
export class A2aCardImporter {
  /** Rounds run one after another: the schedule's and an explicit refresh never write at once. */
  private readonly rounds = new OneAtATime();

  constructor(private readonly deps: A2aImportDeps) {}

  refreshAll(signal?: AbortSignal): Promise<void> {
    return this.rounds.run(() =>
      refreshEach(
        this.deps.db,
        this.deps.config.a2aCards,
        cardSourceId,
        (url, deadline) => this.refresh(url, deadline),
        signal,
        this.deps.config.sourceDeadlineMs,
      ),
    );
  }

  /** One card; never throws for what the remote side did (that goes on the source's status). */
  async refresh(cardUrl: string, signal?: AbortSignal, options: { force?: boolean } = {}): Promise<void> {
    const { db, clock } = this.deps;
    const id = cardSourceId(cardUrl);
    await ensureSource(db, { id, kind: 'a2a', url: cardUrl });
    const source = await readSource(db, id);
    const cursor = (
      source?.cursor === null || source?.cursor === undefined ? {} : JSON.parse(source.cursor)
    ) as CardCursor;
    const now = clock.now();
    const freshUntil = storedFreshUntil(cursor, now);
    if (options.force !== true && freshUntil !== undefined && now < freshUntil) return;
    await updateSource(db, id, { last_attempt_at: now });
    try {
      const state = await this.fetchCard(new URL(cardUrl), cursor, signal);
      if (state.kind === 'gone') {
        await removeRemoteEntries(db, [id], clock.now());
        await updateSource(db, id, {
          state: 'error',
          last_error: `the card answered ${state.status}: its entry was removed`,
          cursor: null,
        });
        return;
      }
      if (state.kind === 'stored') {
        await putRemoteEntry(db, state.entry, clock.now());
      }
      await updateSource(db, id, {
        state: 'ok',
        last_error: state.kind === 'stored' ? (state.note ?? null) : (source?.last_error ?? null),
        last_success_at: clock.now(),
        cursor: JSON.stringify(state.cursor),
      });
    } catch (error) {
      if (!(error instanceof RemoteFetchError || error instanceof InvalidCardError)) throw error;
      await updateSource(db, id, { state: 'error', last_error: error.message.slice(0, 1000) });
    }
  }

  /**
   * The card's trust root: the JWKS pinned for its origin (FEDERATION_A2A_JWKS), else its origin's
   * did:web document. Both are read through the same network policy and limits as the card (a file
   * through the size limit); the card never chooses.
   */
  private trustRoot(url: URL, limits: FetchLimits, signal: AbortSignal | undefined): TrustRoot {
    const { policy, config } = this.deps;
    // Read where it is named: a redirect would let another host (or http) answer for the card's domain.
    const json = async (source: URL): Promise<{ document: unknown } | { error: string }> => {
      try {
        const answer = await fetchRemote(policy, source, {}, limits, signal, false);
        if (answer.status >= 300 && answer.status < 400)
          return {
            error: `${source.href} answered ${answer.status}: a trust root is read where it is named, redirects are not followed`,
          };
        if (answer.status !== 200) return { error: `${source.href} answered ${answer.status}` };
        return { document: JSON.parse(answer.body.toString('utf8')) as unknown };
      } catch (error) {
        return { error: `${source.href}: ${(error as Error).message}` };
      }
    };
    const pinned = this.deps.config.a2aJwks.find((entry) => entry.origin === url.origin)?.jwks;
    if (pinned === undefined) {
      if (url.protocol !== 'https:' && !config.a2aAllowHttpTrustRoots) {
        const error = `${url.origin} serves its card over http, and did:web resolves over https only: nothing ties these keys to the card's domain (FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS=true allows it, for development only)`;
        return { kind: 'did-web', document: async () => ({ error }) };
      }
      // did:web's own resolution: the document at the DID's domain, the card's origin.
      return { kind: 'did-web', document: () => json(new URL('/.well-known/did.json', url.origin)) };
    }
    if (!pinned.startsWith('/')) return { kind: 'jwks', where: pinned, keys: () => json(new URL(pinned)) };
    return {
      kind: 'jwks',
      where: pinned,
      keys: async () => {
        try {
          const bytes = await readFile(pinned);
          if (bytes.length > limits.maxResponseBytes)
            return { error: `${pinned} is larger than FEDERATION_MAX_RESPONSE_KB` };
          return { document: JSON.parse(bytes.toString('utf8')) as unknown };
        } catch (error) {
          return { error: `${pinned}: ${(error as Error).message}` };
        }
      },
    };
  }

  private async fetchCard(
    url: URL,
    cursor: CardCursor,
    signal: AbortSignal | undefined,
  ): Promise<
    | { kind: 'gone'; status: number }
    | { kind: 'unchanged'; cursor: CardCursor }
    | {
        kind: 'stored';
        cursor: CardCursor;
        entry: Parameters<typeof putRemoteEntry>[1];
        note?: string;
      }
  > {
    const { config, policy, clock } = this.deps;
    const limits = { timeoutMs: config.fetchTimeoutMs, maxResponseBytes: config.maxResponseBytes };
    const headers: Record<string, string> = cursor.etag === undefined ? {} : { 'if-none-match': cursor.etag };
    const response = await fetchRemote(policy, url, headers, limits, signal);
    if (response.status === 404 || response.status === 410) return { kind: 'gone', status: response.status };
    const age = maxAgeSeconds(response.headers, MAX_CARD_FRESHNESS_SECONDS);
    const fresh = age === undefined || age === 0 ? {} : { fresh_until: clock.now() + age * 1000 };
    if (response.status === 304) return { kind: 'unchanged', cursor: { ...cursor, ...fresh } };
    if (response.status !== 200)
      throw new RemoteFetchError(`${url.href} answered ${response.status}; the entry is kept as last read`);
    let card: unknown;
    try {
      card = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new InvalidCardError(`${url.href} did not answer JSON; the entry is kept as last read`);
    }
    const listing = readAgentCard(card);
    const checked = await verifyCardSignatures(
      card as Record<string, unknown>,
      url,
      this.trustRoot(url, limits, signal),
    );
    const provenance: Provenance = {
      kind: 'imported',
      home_registry: url.origin,
      source_url: url.href,
      format: 'a2a-agent-card',
      verification: checked.verification,
      ...(checked.did === undefined ? {} : { did: checked.did }),
      ...(checked.kid === undefined ? {} : { kid: checked.kid }),
      ...(checked.reason === undefined ? {} : { reason: checked.reason }),
      fetched_at: clock.now(),
    };
    const etag = response.headers.etag;
    return {
      kind: 'stored',
      cursor: { ...(etag === undefined ? {} : { etag }), ...fresh },
      note: checked.reason === undefined ? undefined : `${checked.verification}: ${checked.reason}`,
      entry: {
        id: cardSourceId(url.href),
        source_id: cardSourceId(url.href),
        kind: 'imported',
        did: checked.did ?? null,
        name: listing.name,
        description: listing.description,
        capabilities: JSON.stringify(listing.capabilities),
        tags: JSON.stringify(listing.tags),
        endpoints: JSON.stringify(listing.endpoints),
        home_registry: url.origin,
        provenance: provenanceJson(provenance),
      },
    };
  }
}
