import { httpUrl, parseList } from './read-settings.js';
import type { SettingValues } from './settings.js';

/** Remote entries' settings (docs/federation.md): what to import and follow, and each fetch's limits. */

export interface FederationConfig {
  /** A2A agent card URLs to import (a bare domain became its /.well-known/agent-card.json). */
  a2aCards: string[];
  /**
   * Card origins whose trust root is a JWKS the operator pinned (a URL, fetched like a card, or an
   * absolute file path), instead of the origin's did:web document.
   */
  a2aJwks: { origin: string; jwks: string }[];
  /**
   * Development only: a card served over plain http may be verified against its origin's did.json,
   * read over http too. Off, such a card is at most signed-untrusted (did:web resolves over https).
   */
  a2aAllowHttpTrustRoots: boolean;
  /** Peer registries of this kind to follow, each with its pinned note verifier key if given. */
  peers: { url: string; key?: string }[];
  /** MCP Registry API bases to import (servers paged from <base>/v0.1/servers). */
  mcpRegistries: string[];
  /** How often each source is fetched again. */
  refreshMs: number;
  /** Each fetch's deadline, whole answer included (a slow drip ends here). */
  fetchTimeoutMs: number;
  /** Most bytes one answer may have. */
  maxResponseBytes: number;
  /** Most entries one peer's source may hold; new agents beyond it are refused, with the reason on its status. */
  maxEntriesPerPeer: number;
  /** Most entries one MCP Registry's source may hold; new servers beyond it are refused likewise. */
  maxEntriesPerMcpRegistry: number;
  /**
   * Rounds after which an entry its source stopped listing, without a tombstone, goes away: an MCP
   * Registry is read in full every this many rounds, and what a complete full read lacks is removed.
   */
  expireAfterRounds: number;
  /**
   * Most time one source's refresh may take in a round (never more than refreshMs): a source cut here
   * resumes next round, from the progress it stored.
   */
  sourceDeadlineMs: number;
  /** Most new log entries one round verifies of one peer; the rest waits for the next rounds. */
  peerCatchUpEntries: number;
  /** Most entry bundle bytes one round reads of one peer. */
  peerCatchUpBytes: number;
}

/** The sources that FEDERATION_A2A_CARDS, FEDERATION_A2A_JWKS, FEDERATION_PEERS and FEDERATION_MCP_REGISTRIES name. */
export function parseFederationSources(
  settings: Pick<
    SettingValues,
    'FEDERATION_A2A_CARDS' | 'FEDERATION_A2A_JWKS' | 'FEDERATION_PEERS' | 'FEDERATION_MCP_REGISTRIES'
  >,
  problems: string[],
): Pick<FederationConfig, 'a2aCards' | 'a2aJwks' | 'peers' | 'mcpRegistries'> {
  const a2aCards = unique(
    parseList(
      settings.FEDERATION_A2A_CARDS,
      agentCardUrl,
      'FEDERATION_A2A_CARDS must be comma-separated http(s) card URLs or domains (agents.example, https://agents.example/.well-known/agent-card.json)',
      problems,
    ),
  );

  const a2aJwks: FederationConfig['a2aJwks'] = [];
  parseList(
    settings.FEDERATION_A2A_JWKS,
    (given) => {
      const split = given.indexOf('=');
      if (split === -1) throw new Error('no =');
      const origin = httpUrl(given.slice(0, split).trim());
      const jwks = given.slice(split + 1).trim();
      if (origin.pathname !== '/' || origin.search !== '') throw new Error('not an origin');
      if (!jwks.startsWith('/')) httpUrl(jwks);
      if (a2aJwks.some((pinned) => pinned.origin === origin.origin)) throw new Error('pinned twice');
      a2aJwks.push({ origin: origin.origin, jwks });
      return origin.origin;
    },
    'FEDERATION_A2A_JWKS must be comma-separated <card origin>=<JWKS URL or absolute file path>, each origin once (https://agents.example=https://keys.example/jwks.json)',
    problems,
  );

  const peers: FederationConfig['peers'] = [];
  parseList(
    settings.FEDERATION_PEERS,
    (given) => {
      // URL, or URL=<note verifier key> to pin the key instead of taking it on first contact.
      const split = given.indexOf('=');
      const url = httpUrl(split === -1 ? given : given.slice(0, split));
      const key = split === -1 ? undefined : given.slice(split + 1).trim();
      if (url.pathname !== '/' || url.search !== '') throw new Error('not an origin');
      if (key !== undefined && !/^[^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/.test(key))
        throw new Error('not a note verifier key');
      if (!peers.some((peer) => peer.url === url.origin))
        peers.push({ url: url.origin, ...(key === undefined ? {} : { key }) });
      return url.origin;
    },
    'FEDERATION_PEERS must be comma-separated registry origins, each optionally =<its /log/verifier-key> (https://peer.example=peer.example/log+1a2b3c4d+AQ...)',
    problems,
  );

  const mcpRegistries = unique(
    parseList(
      settings.FEDERATION_MCP_REGISTRIES,
      (given) => {
        const url = httpUrl(given);
        if (url.search !== '' || url.hash !== '') throw new Error('not a base URL');
        return url.href.replace(/\/+$/, '');
      },
      'FEDERATION_MCP_REGISTRIES must be comma-separated http(s) API base URLs such as https://registry.modelcontextprotocol.io',
      problems,
    ),
  );
  return { a2aCards, a2aJwks, peers, mcpRegistries };
}

/** Each value once, in the order first given. */
const unique = (values: string[]): string[] => [...new Set(values)];

/** A card URL as given, or a bare domain's well-known card; throws if not an http(s) URL. */
function agentCardUrl(given: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : `https://${given}`;
  const url = httpUrl(withScheme);
  if (url.username !== '' || url.password !== '' || url.hash !== '') throw new Error('not a card URL');
  if (url.pathname === '/' && url.search === '') url.pathname = '/.well-known/agent-card.json';
  return url.href;
}
