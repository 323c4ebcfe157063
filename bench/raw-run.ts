/** The raw figures `npm run bench` writes to bench/out/<db>-<time>.json, as the reading scripts use them. */
export interface RawRow {
  name: string;
  label: string;
  connections: number;
  load: { rps: number; p50: number; p99: number };
  cpuPerRequest: number;
}

export interface RawRun {
  options: { agents: number; db: string };
  seedSeconds: number;
  peakRssKb: number;
  databaseBytes?: number;
  rows: RawRow[];
}
