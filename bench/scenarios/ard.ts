import type autocannon from 'autocannon';
import { SEARCH_QUERIES } from '../corpus.js';
import { call } from '../client.js';
import { cycling, mergeRows, type Row } from '../measure.js';
import { log } from '../processes.js';
import { atConnections, measureRegistry, type ScenarioContext } from './context.js';

/** A seeded agent's ARD URN (docs/ard.md); the bench's registry is on localhost. */
const urnOf = (did: string): string =>
  did.startsWith('did:pkh:')
    ? `urn:air:localhost:agents:${did.slice('did:'.length)}`
    : `urn:air:localhost:agents:${did.split(':').at(-1) ?? ''}`;

/**
 * ARD against the registry's own API, each pair in one run: POST /ard/search against the equivalent
 * GET /api/agents/search (the same words, 20 a page), GET /ard/agents/{identifier} against GET profile
 * (the same agents), both at the run's connections (req/s) and at one (p99); then the publisher file and
 * a catalog page at one connection (their p50, served from the five-second cache).
 */
export async function ardScenario(context: ScenarioContext): Promise<Row[]> {
  const entryRows = await ardEntryRounds(context);
  if (!context.wanted('ard')) return entryRows;
  const { options, sampleDids } = context;
  const searchPaths = SEARCH_QUERIES.map((q) => `/api/agents/search?q=${encodeURIComponent(q)}&limit=20`);
  const bodies = SEARCH_QUERIES.map((q) => JSON.stringify({ query: { text: q }, pageSize: 20 }));
  let next = 0;
  const ardSearch: autocannon.Request[] = [
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => ({
        ...request,
        path: '/ard/search',
        body: bodies[next++ % bodies.length] as string,
      }),
    },
  ];
  const profilePaths = sampleDids.map((did) => `/api/agents/${encodeURIComponent(did)}`);
  const entryPaths = sampleDids.map((did) => `/ard/agents/${urnOf(did)}`);
  const pairs: {
    name: string;
    label: string;
    requests: autocannon.Request[];
    expectedStatuses?: number[];
  }[] = [
    {
      name: 'ard-api-search',
      label: 'GET /api/agents/search?q= (20 a page)',
      requests: cycling(searchPaths),
    },
    { name: 'ard-search', label: 'POST /ard/search (the same words)', requests: ardSearch },
    { name: 'ard-get-profile', label: 'GET /api/agents/{did}', requests: cycling(profilePaths) },
    {
      name: 'ard-get-entry',
      label: 'GET /ard/agents/{identifier} (the same agents)',
      requests: cycling(entryPaths),
      // ARD publishes active agents only: the sampled deactivated ones are 404s.
      expectedStatuses: [404],
    },
  ];
  const rows: Row[] = [];
  for (const pair of pairs) {
    rows.push(
      await measureRegistry(context, {
        name: pair.name,
        label: pair.label,
        connections: options.connections,
        load: { requests: pair.requests },
        ...(pair.expectedStatuses === undefined ? {} : { expectedStatuses: pair.expectedStatuses }),
      }),
    );
    rows.push(
      await measureRegistry(context, {
        ...atConnections(pair.name, pair.label, 1),
        load: { requests: pair.requests },
        warmup: false,
        ...(pair.expectedStatuses === undefined ? {} : { expectedStatuses: pair.expectedStatuses }),
      }),
    );
  }
  for (const [name, label, path] of [
    ['ard-manifest', 'GET /.well-known/ai-catalog.json', '/.well-known/ai-catalog.json'],
    ['ard-catalog-page', 'GET /ard/catalog (first page, 100 agents)', '/ard/catalog'],
  ] as const) {
    rows.push(
      await measureRegistry(context, {
        ...atConnections(name, label, 1),
        load: { requests: cycling([path]) },
      }),
    );
  }
  return [...entryRows, ...rows];
}

/** Interleaved rounds per pair in `--only ard-entry`: enough to read a CPU ratio on a busy machine. */
const ENTRY_ROUNDS = 6;

/**
 * `--only ard-entry`: GET /ard/agents/{identifier} against GET profile alone, in interleaved rounds
 * (profile, entry, profile, ...) at the run's connections and at one, each pair merged into one row, so
 * a slow patch of a shared machine lands on both. Only agents the entry publishes are cycled (a
 * deactivated agent's 404 would cost CPU without counting as a request), the same for both routes.
 */
async function ardEntryRounds(context: ScenarioContext): Promise<Row[]> {
  if (!context.wanted('ard-entry')) return [];
  const { options } = context;
  const published: string[] = [];
  const sample = [...new Set(context.sampleDids)];
  for (let i = 0; i < sample.length; i += 50) {
    const batch = sample.slice(i, i + 50);
    const statuses = await Promise.all(
      batch.map(async (did) => (await call(context.base, 'GET', `/ard/agents/${urnOf(did)}`)).status),
    );
    batch.forEach((did, index) => {
      if (statuses[index] === 200) published.push(did);
    });
  }
  log(`ard-entry: ${published.length} of ${sample.length} sampled agents are published (active)`);
  const targets = [
    {
      name: 'ard-entry-get-profile',
      label: 'GET /api/agents/{did} (active agents)',
      requests: cycling(published.map((did) => `/api/agents/${encodeURIComponent(did)}`)),
    },
    {
      name: 'ard-entry-get-entry',
      label: 'GET /ard/agents/{identifier} (the same agents)',
      requests: cycling(published.map((did) => `/ard/agents/${urnOf(did)}`)),
    },
  ];
  const rows: Row[] = [];
  for (const connections of [options.connections, 1]) {
    const rounds = new Map<string, Row[]>();
    for (let round = 0; round < (options.smoke ? 1 : ENTRY_ROUNDS); round++) {
      for (const target of targets) {
        const spec = atConnections(target.name, `${target.label}, round ${round + 1}`, connections);
        const row = await measureRegistry(context, {
          ...spec,
          load: { requests: target.requests },
          ...(round === 0 ? {} : { warmup: false as const }),
        });
        rounds.set(spec.name, [...(rounds.get(spec.name) ?? []), row]);
      }
    }
    for (const target of targets) {
      const spec = atConnections(target.name, target.label, connections);
      rows.push(mergeRows(spec.name, spec.label, rounds.get(spec.name) ?? []));
    }
  }
  return rows;
}
