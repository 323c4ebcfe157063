import path from 'node:path';

/** Command-line options of `npm run bench`. */
export interface Options {
  db: 'sqlite' | 'postgres';
  agents: number;
  /**
   * Remote entries seeded beside the agents (`--remote`); by default as many as agents when search is
   * measured (the search scenarios then measure every shape with scope=federated too), else none.
   */
  remote: number;
  duration: number;
  connections: number;
  cpuProf: boolean;
  only: Set<string> | undefined;
  warmup: number;
  /** Seconds per search shape (there are 18 shapes, each at 1 and 10 connections). */
  searchDuration: number;
  /**
   * Directory of seeds kept between runs: the first run of a dialect, size and port seeds and keeps a
   * copy there, later ones start from a copy of it (bench/seeded-database.ts).
   */
  keepDatabase: string | undefined;
  /** Node.js flags for the registry process only (e.g. `--max-semi-space-size=64`), not the load generator. */
  registryNodeFlags: string[];
  /**
   * `--smoke`: every scenario once, small and short, checked rather than measured (bench/RESULTS.md,
   * "Smoke bench"): any error, unexpected status or mismatch fails the run; no budget is judged.
   */
  smoke: boolean;
}

/**
 * What `--smoke` changes unless given: a few thousand agents and as many remote entries (so federated
 * search runs), a second a run, half a second a search shape, no warm-up.
 */
const SMOKE_DEFAULTS = { agents: 3_000, duration: 1, searchDuration: 0.5, warmup: 0 } as const;

export function parseOptions(argv: string[]): Options {
  const options: Options = {
    db: 'sqlite',
    agents: 100_000,
    remote: -1,
    duration: 10,
    connections: 10,
    cpuProf: false,
    only: undefined,
    warmup: 2,
    searchDuration: 4,
    keepDatabase: undefined,
    registryNodeFlags: [],
    smoke: false,
  };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--db') {
      const db = value();
      if (db !== 'sqlite' && db !== 'postgres') throw new Error('--db is sqlite or postgres');
      options.db = db;
    } else if (arg === '--agents') options.agents = Number(value());
    else if (arg === '--remote') options.remote = Number(value());
    else if (arg === '--duration') options.duration = Number(value());
    else if (arg === '--connections') options.connections = Number(value());
    else if (arg === '--warmup') options.warmup = Number(value());
    else if (arg === '--search-duration') options.searchDuration = Number(value());
    else if (arg === '--keep-database') options.keepDatabase = path.resolve(value());
    else if (arg === '--registry-node-flags') options.registryNodeFlags = value().split(' ').filter(Boolean);
    else if (arg === '--cpu-prof') options.cpuProf = true;
    else if (arg === '--only') options.only = new Set(value().split(','));
    else if (arg === '--smoke') options.smoke = true;
    else throw new Error(`unknown option ${arg}`);
    given.add(arg);
  }
  if (options.smoke) {
    if (!given.has('--agents')) options.agents = SMOKE_DEFAULTS.agents;
    if (!given.has('--duration')) options.duration = SMOKE_DEFAULTS.duration;
    if (!given.has('--search-duration')) options.searchDuration = SMOKE_DEFAULTS.searchDuration;
    if (!given.has('--warmup')) options.warmup = SMOKE_DEFAULTS.warmup;
  }
  for (const [flag, value] of [
    ['--agents', options.agents],
    ['--duration', options.duration],
    ['--search-duration', options.searchDuration],
    ['--connections', options.connections],
  ] as const) {
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} is a positive number`);
  }
  if (!Number.isFinite(options.warmup) || options.warmup < 0)
    throw new Error('--warmup is 0 or more seconds');
  if (options.remote < 0) {
    const searched =
      options.only === undefined || [...options.only].some((name) => name.startsWith('search'));
    options.remote = searched ? options.agents : 0;
  }
  return options;
}
