import { SEARCH_LIMITS, type SearchOrder, type SearchSort } from '@agent-registry/protocol/limits';
import type { SearchHit } from '@agent-registry/sdk';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { contextOf } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { anonymousClient, targetDid } from '../registry.js';
import { neutralScoreHint } from '../reputation-hint.js';
import { shownScore } from '../unrated.js';

/** Commander parser for a whole number in a range; a bad value is a usage error (exit 2). */
export const integerIn =
  (min: number, max: number) =>
  (value: string): number => {
    const number = Number(value);
    if (!/^-?\d+$/.test(value) || number < min || number > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    }
    return number;
  };

export const numberIn =
  (min: number, max: number) =>
  (value: string): number => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || number < min || number > max) {
      throw new InvalidArgumentError(`expected a number from ${min} to ${max}`);
    }
    return number;
  };

/**
 * Where a search hit lives: `here` for an agent registered at this registry, else its home registry
 * with how this registry knows it (mirrored and its state, or imported and its verification).
 */
export function whereItLives(agent: SearchHit): string {
  const { provenance } = agent;
  if (provenance.kind === 'registered') return 'here';
  const trust = provenance.kind === 'mirrored' ? provenance.state : provenance.verification;
  return `${agent.home_registry} (${provenance.kind}${trust === undefined ? '' : `, ${trust}`})`;
}

/**
 * What this registry's probes found of a search hit: for an imported entry its observed status, tool
 * count and the start of its tools digest; for an agent registered here the start of its capabilities
 * digest; `-` for an entry not probed (yet).
 */
export function observedText(agent: SearchHit): string {
  const short = (digest: string) => `${digest.slice(0, 'sha256:'.length + 12)}…`;
  if (agent.capabilities_digest !== undefined) return short(agent.capabilities_digest);
  const observed = agent.observed;
  if (observed === undefined) return '-';
  if (observed.tools_count === null || observed.tools_digest === null) return observed.status;
  return `${observed.status}, ${observed.tools_count} tools ${short(observed.tools_digest)}`;
}

interface SearchOptions {
  capability?: string;
  tags?: string;
  minReputation?: number;
  available?: boolean;
  federated?: boolean;
  sort?: SearchSort;
  order?: SearchOrder;
  limit?: number;
  offset?: number;
  cursor?: string;
}

export function registerSearch(program: Command): void {
  const { minReputation } = SEARCH_LIMITS;
  const command = program
    .command('search')
    .description('Find agents by words, capability, tags and reputation')
    .argument('[words...]', 'full-text query over names, descriptions, capabilities and tags')
    .option('--capability <type>', 'only agents with this capability type, e.g. translation')
    .option('--tags <list>', 'only agents with any of these comma-separated tags')
    .option(
      '--min-reputation <score>',
      `minimum reputation score, ${minReputation.min}-${minReputation.max}`,
      numberIn(minReputation.min, minReputation.max),
    )
    .option('--available', 'only agents whose worker is online now')
    .option(
      '--federated',
      'also the read-only entries of agents that live elsewhere (peer registries, A2A cards, MCP Registries); a "lives at" column says where',
    )
    .addOption(
      new Option(
        '--sort <field>',
        `order by (default: ${SEARCH_LIMITS.sortDefaultWithQuery} with words, else ${SEARCH_LIMITS.sortDefault})`,
      ).choices(SEARCH_LIMITS.sorts),
    )
    .addOption(
      new Option('--order <direction>', `direction (default: ${SEARCH_LIMITS.orderDefault})`).choices(
        SEARCH_LIMITS.orders,
      ),
    )
    .option(
      '--limit <n>',
      `results per page, 1-${SEARCH_LIMITS.limitMax} (default ${SEARCH_LIMITS.limitDefault})`,
      integerIn(1, SEARCH_LIMITS.limitMax),
    )
    .option(
      '--offset <n>',
      `skip this many results, 0-${SEARCH_LIMITS.offsetMax}`,
      integerIn(0, SEARCH_LIMITS.offsetMax),
    )
    .option(
      '--cursor <cursor>',
      'the next page: the cursor a previous search printed (same words and filters)',
    )
    .action(async (words: string[], options: SearchOptions, self: Command) => {
      const cli = contextOf(self);
      const q = words.join(' ').trim();
      const tags = options.tags
        ?.split(',')
        .map((tag) => tag.trim())
        .filter(Boolean);
      const page = await (
        await anonymousClient(cli)
      ).search({
        ...(q ? { q } : {}),
        ...(options.capability ? { capability: options.capability } : {}),
        ...(tags && tags.length > 0 ? { tags } : {}),
        ...(options.minReputation !== undefined ? { minReputation: options.minReputation } : {}),
        ...(options.available ? { available: true } : {}),
        ...(options.federated ? { scope: 'federated' as const } : {}),
        ...(options.sort ? { sort: options.sort } : {}),
        ...(options.order ? { order: options.order } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.offset !== undefined ? { offset: options.offset } : {}),
        ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
      });
      cli.out.result(page, () => {
        cli.out.table(
          page.agents,
          [
            // A remote entry without a DID of its own is listed by its entry id, which `show` takes too.
            { header: options.federated ? 'did or entry id' : 'did', value: (agent) => agent.did, max: 90 },
            { header: 'name', value: (agent) => agent.name, max: 30 },
            { header: 'reputation', value: (agent) => shownScore(agent) },
            { header: 'reviews', value: (agent) => String(agent.total_reviews) },
            { header: 'available', value: (agent) => agent.availability.status },
            {
              header: 'capabilities',
              value: (agent) => agent.capabilities.map((c) => c.type).join(', '),
              max: 40,
            },
            ...(options.federated
              ? [
                  { header: 'observed', value: (agent: SearchHit) => observedText(agent), max: 50 },
                  { header: 'lives at', value: (agent: SearchHit) => whereItLives(agent), max: 60 },
                ]
              : []),
          ],
          'no agents match',
        );
        if (page.agents.length > 0) {
          cli.out.line();
          cli.out.line(
            options.cursor === undefined
              ? `${page.offset + 1}-${page.offset + page.agents.length} of ${page.total}`
              : `${page.agents.length} more of ${page.total}`,
          );
          if (page.next_cursor !== null) cli.out.line(`next page: add --cursor ${page.next_cursor}`);
        }
      });
    });
  withExamples(
    command,
    'agent-registry search translate',
    'agent-registry search --capability translation --tags fr,de --min-reputation 60',
    'agent-registry search --sort reputation --order desc --limit 10 --json',
    'agent-registry search translate --federated',
  );
}

export function registerReputation(program: Command): void {
  const command = program
    .command('reputation')
    .description("Show an agent's reputation: score (0-100), average rating and rating distribution")
    .argument('[did]', "the agent (default: this agent's own DID)")
    .action(async (did: string | undefined, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const target = await targetDid(cli, did);
      const client = await anonymousClient(cli);
      const stats = await client.getReputation(target);
      const why = await neutralScoreHint(client, stats);
      cli.out.result({ ...stats, did: target, ...(why ? { why } : {}) }, () => {
        cli.out.fields([
          ['did', target],
          ['reputation', shownScore(stats)],
          ['average rating', stats.average_rating],
          ['reviews', stats.total_reviews],
          ['why', why],
        ]);
        const distribution = Object.entries(stats.rating_distribution as Record<string, unknown>).filter(
          ([, count]) => typeof count === 'number',
        ) as [string, number][];
        if (distribution.length > 0) {
          cli.out.line();
          const widest = Math.max(1, ...distribution.map(([, count]) => count));
          for (const [bucket, count] of distribution) {
            cli.out.line(
              `${bucket.padStart(6)}  ${'#'.repeat(Math.round((count / widest) * 30)).padEnd(30)} ${count}`,
            );
          }
        }
      });
    });
  withExamples(
    command,
    'agent-registry reputation',
    'agent-registry reputation did:web:registry.example:agent:0123... --json',
  );
}

export function registerVerify(program: Command): void {
  const command = program
    .command('verify')
    .description(
      "Check that the agent's profile is the latest one the registry's transparency log holds (signed checkpoint, inclusion proof, profile digest)",
    )
    .argument('[did]', "the agent (default: this agent's own DID)")
    .option(
      '--verifier-key <key>',
      "the registry's log verifier key from a source you trust (default: the key the registry serves at /log/verifier-key, which proves the profile is the one its log holds, not that the log is honest)",
    )
    .action(async (did: string | undefined, options: { verifierKey?: string }, self: Command) => {
      const cli = contextOf(self);
      if (options.verifierKey !== undefined) {
        // A malformed key is the command line's fault (exit 2), not a log that fails to verify (exit 5).
        try {
          (await import('@agent-registry/protocol')).parseVerifierKey(options.verifierKey);
        } catch (error) {
          throw new UsageError(
            `--verifier-key: ${(error as Error).message}; expected <name>+<8 hex key ID>+<base64 of 0x01 and the 32-byte Ed25519 key>, as the registry serves at /log/verifier-key, e.g. registry.example/log+1a2b3c4d+AX...`,
            'INVALID_OPTION',
          );
        }
      }
      const target = await targetDid(cli, did);
      const keySource = options.verifierKey === undefined ? 'served' : 'flag';
      if (keySource === 'served') {
        cli.out.warn(
          'checked against the verifier key the registry itself serves: a registry that rewrote its log would serve a key for it too; pass --verifier-key with the key its operator publishes (docs/transparency-log.md) to check against a key you trust',
        );
      }
      const verified = await (
        await anonymousClient(cli)
      ).verifyAgent(target, options.verifierKey === undefined ? {} : { verifierKey: options.verifierKey });
      const result = {
        did: target,
        verified: true,
        /** Where the verifier key came from: the flag (a key you trust), or the registry it checks. */
        key_source: keySource,
        leaf_index: verified.leafIndex,
        tree_size: verified.treeSize,
        origin: verified.origin,
        root_hash: verified.rootHash,
        leaf: verified.leaf,
      };
      cli.out.result(result, () => {
        cli.out.fields([
          ['did', target],
          [
            'logged',
            `at position ${verified.leafIndex} of ${verified.treeSize}, verified${keySource === 'served' ? ' (against the key the registry serves)' : ''}`,
          ],
          ['operation', verified.leaf.op],
          ['log', verified.origin],
          ['root', verified.rootHash],
        ]);
      });
    });
  withExamples(
    command,
    'agent-registry verify did:web:registry.example:agent:0123...',
    'agent-registry verify --verifier-key "registry.example/log+1a2b3c4d+AX..." --json',
  );
}
