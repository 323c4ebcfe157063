import { CAPABILITY_TYPES, SEARCH_QUERIES, TAGS, WORDS } from '../corpus.js';
import { call } from '../client.js';
import { cycling, type Row } from '../measure.js';
import type { Options } from '../options.js';
import { log } from '../processes.js';
import { atConnections, measureRegistry, type ScenarioContext } from './context.js';

/**
 * Every search shape (no filter, capability, tags, min_reputation, q, q + capability, q + tags), each in
 * every sort (reputation, created_at, and relevance for q), measured at 1 connection (p99: the latency a
 * caller sees) and at 10 (req/s). Each request of a row differs: the words, filters, offsets (the first
 * five pages) and order (desc and asc alternate) cycle, so nothing is served twice in a row. The broadest
 * one-word query (the word in most agents, found by asking the registry) is every fourth `q` of every
 * q-shape. With remote entries seeded (`--remote`), every shape but the cursor pages is measured again
 * with scope=federated.
 */
export interface SearchShape {
  name: string;
  label: string;
  paths: string[];
}

const PAGES = [0, 20, 40, 60, 80];
const MIN_REPUTATIONS = [10, 30, 50, 70];

/** The word that matches the most agents, among the corpus words and capability types. */
export async function broadestWord(base: string): Promise<{ word: string; total: number }> {
  let best = { word: WORDS[0] as string, total: -1 };
  const candidates = [
    ...WORDS.slice(0, 40),
    ...CAPABILITY_TYPES.slice(0, 10).flatMap((type) => type.split('-')),
  ];
  for (const word of new Set(candidates)) {
    const answer = await call(base, 'GET', `/api/agents/search?q=${encodeURIComponent(word)}&limit=1`);
    const total = Number((answer.json as { total?: number }).total ?? 0);
    if (total > best.total) best = { word, total };
  }
  return best;
}

export function searchShapes(broadest: string, cursors: boolean): SearchShape[] {
  const capabilities = CAPABILITY_TYPES.slice(0, 12);
  const tagSets = TAGS.slice(0, 12).map((tag, index) =>
    index % 3 === 0 ? `${tag},${TAGS[(index + 5) % 12] as string}` : tag,
  );
  const queries = SEARCH_QUERIES.flatMap((q, index) => (index % 3 === 0 ? [broadest, q] : [q]));
  const variants = (count: number, make: (index: number) => string) =>
    Array.from({ length: count }, (_, index) => {
      const order = index % 2 === 0 ? 'desc' : 'asc';
      return `/api/agents/search?${make(index)}&order=${order}&limit=20&offset=${PAGES[index % PAGES.length] as number}`;
    });
  const pick = <T>(items: readonly T[], index: number): T => items[index % items.length] as T;
  const q = (index: number) => `q=${encodeURIComponent(pick(queries, index))}`;
  const filters: [string, string, (index: number) => string][] = [
    ['none', 'no filter', () => ''],
    ['capability', 'capability', (index) => `capability=${pick(capabilities, index)}`],
    ['tags', 'tags', (index) => `tags=${encodeURIComponent(pick(tagSets, index))}`],
    ['min-reputation', 'min_reputation', (index) => `min_reputation=${pick(MIN_REPUTATIONS, index)}`],
    ['q', 'q', q],
    ['q-capability', 'q + capability', (index) => `${q(index)}&capability=${pick(capabilities, index * 7)}`],
    ['q-tags', 'q + tags', (index) => `${q(index)}&tags=${encodeURIComponent(pick(tagSets, index * 5))}`],
  ];
  const shapes: SearchShape[] = [];
  for (const [name, label, make] of filters) {
    const sorts = name.startsWith('q')
      ? ['relevance', 'reputation', 'created_at']
      : ['reputation', 'created_at'];
    for (const sort of sorts) {
      const sortParam = sort === 'relevance' ? '' : `sort=${sort}`;
      shapes.push({
        name: `search-${name}-${sort}`,
        label: `search ${label}, ${sort === 'relevance' ? 'relevance' : `sort=${sort}`}`,
        paths: variants(240, (index) => [make(index), sortParam].filter((part) => part !== '').join('&')),
      });
    }
  }
  if (cursors) {
    shapes.push({
      name: 'search-cursor',
      label: 'search q, pages 2-6 by cursor',
      paths: [],
    });
  }
  return shapes;
}

/** The same requests with scope=federated (cursor pages excepted: their cursors are local searches'). */
export function federatedShapes(shapes: readonly SearchShape[]): SearchShape[] {
  return shapes
    .filter((shape) => shape.name !== 'search-cursor')
    .map((shape) => ({
      name: shape.name.replace(/^search-/, 'search-federated-'),
      label: shape.label.replace(/^search /, 'search federated, '),
      paths: shape.paths.map((url) => `${url}&scope=federated`),
    }));
}

/** Cursor pages: the next_cursor of real first pages, fetched before the run. */
async function cursorPaths(base: string, broadest: string): Promise<string[]> {
  const paths: string[] = [];
  for (const q of [broadest, ...SEARCH_QUERIES.slice(0, 12)]) {
    let url = `/api/agents/search?q=${encodeURIComponent(q)}&limit=20`;
    for (let page = 0; page < 5; page += 1) {
      const answer = await call(base, 'GET', url);
      const next = (answer.json as { next_cursor?: string | null }).next_cursor;
      if (typeof next !== 'string') break;
      url = `/api/agents/search?q=${encodeURIComponent(q)}&limit=20&cursor=${next}`;
      paths.push(url);
    }
  }
  return paths;
}

export async function searchScenarios(context: ScenarioContext): Promise<Row[]> {
  const { base, options, wanted } = context;
  const rows: Row[] = [];
  const broadest = await broadestWord(base);
  log(`broadest one-word query: "${broadest.word}" (${broadest.total} agents)`);
  const shapes = searchShapes(broadest.word, true);
  const cursor = shapes.find((shape) => shape.name === 'search-cursor');
  if (cursor !== undefined) cursor.paths = await cursorPaths(base, broadest.word);
  // With remote entries, every shape again over the registry's agents and the remote entries together.
  if (options.remote > 0) shapes.push(...federatedShapes(shapes));
  // Two rows a shape: each runs for --search-duration after a warm-up of at most a second.
  const searchOptions = { ...options, duration: options.searchDuration, warmup: Math.min(options.warmup, 1) };
  for (const shape of shapes) {
    if (!wanted('search') && !wanted(shape.name)) continue;
    if (shape.paths.length === 0) continue;
    // A smoke run asks each shape once, at the run's connections.
    for (const connections of options.smoke ? [options.connections] : [1, options.connections]) {
      rows.push(
        await measureRegistry(
          context,
          {
            ...atConnections(shape.name, shape.label, connections),
            load: { requests: cycling(shape.paths) },
          },
          searchOptions,
        ),
      );
    }
  }
  return rows;
}

/**
 * Budgets: p99 at 1 connection <= 10 ms on SQLite (20 ms on PostgreSQL), and >= 1,000 requests per second
 * at 10 connections on SQLite.
 */
export function searchBudgets(rows: Row[], db: Options['db']): string[] {
  const out: string[] = [];
  const suffix = db === 'postgres' ? ' (postgres)' : '';
  const p99Target = db === 'postgres' ? 20 : 10;
  for (const single of rows.filter((row) => row.name.startsWith('search-') && row.name.endsWith('-1'))) {
    const name = single.name.slice(0, -2);
    const loaded = rows.find((row) => row.name === name);
    const p99 = single.load.p99;
    out.push(
      `BUDGET ${name}-p99${suffix}: ${p99.toFixed(1)} ms at 1 connection (target <= ${p99Target} ms) ${p99 <= p99Target ? 'PASS' : 'FALLS SHORT'}`,
    );
    if (loaded !== undefined && db === 'sqlite') {
      const rps = loaded.load.rps;
      out.push(
        `BUDGET ${name}-rps: ${rps.toFixed(0)} req/s at ${loaded.connections} connections (target >= 1000) ${rps >= 1000 ? 'PASS' : 'FALLS SHORT'}`,
      );
    }
  }
  return out;
}
