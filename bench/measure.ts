import type autocannon from 'autocannon';
import { mergeLoads, runLoad, type LoadResult } from './load.js';
import type { Options } from './options.js';
import { log } from './processes.js';
import { cpuMs, postgresCpuByPid, postgresCpuSince, statusKb } from './proc.js';

/** One measured scenario: autocannon load, the server's CPU from /proc, peak memory. */

export interface Row {
  name: string;
  label: string;
  target: 'baseline' | 'floor' | 'registry';
  connections: number;
  load: LoadResult;
  /** Server CPU over the measured run(s), ms. */
  cpuTotal: number;
  /** Server CPU (utime + stime) per completed request, ms. */
  cpuPerRequest: number;
  /** Server CPU time over wall time: 100% is one core busy. */
  cpuPercent: number;
  /** PostgreSQL processes' CPU per completed request, ms (PostgreSQL runs only). */
  dbCpuPerRequest?: number;
  note?: string;
  extra?: Record<string, number>;
}

export interface ScenarioSpec {
  name: string;
  label: string;
  connections: number;
  load: Omit<Parameters<typeof runLoad>[0], 'connections' | 'url'>;
  warmup?: Omit<Parameters<typeof runLoad>[0], 'connections' | 'url'> | false;
  note?: string;
  /** Called between the warm-up and the measured run (e.g. to forget warm-up samples). */
  beforeMeasure?: () => void;
  /** Statuses other than 2xx the scenario expects of some requests (a smoke run fails on any other). */
  expectedStatuses?: readonly number[];
}

export async function measure(
  base: string,
  pid: number,
  target: Row['target'],
  spec: ScenarioSpec,
  options: Options,
): Promise<Row> {
  if (spec.warmup !== false && options.warmup > 0) {
    await runLoad({
      url: base,
      connections: spec.connections,
      ...(spec.warmup ?? spec.load),
      duration: options.warmup,
    });
  }
  spec.beforeMeasure?.();
  const cpuBefore = cpuMs(pid);
  const dbBefore = options.db === 'postgres' ? postgresCpuByPid() : new Map<number, number>();
  const load = await runLoad({
    url: base,
    connections: spec.connections,
    duration: options.duration,
    ...spec.load,
  });
  const cpu = cpuMs(pid) - cpuBefore;
  const row: Row = {
    name: spec.name,
    label: spec.label,
    target,
    connections: spec.connections,
    load,
    cpuTotal: cpu,
    cpuPerRequest: cpu / Math.max(1, load.ok),
    cpuPercent: (cpu / (load.seconds * 1000)) * 100,
  };
  if (options.db === 'postgres') row.dbCpuPerRequest = postgresCpuSince(dbBefore) / Math.max(1, load.ok);
  if (spec.note !== undefined) row.note = spec.note;
  const bad = load.non2xx + load.errors;
  log(
    `${spec.label}: ${load.rps.toFixed(0)} req/s, p50 ${load.p50.toFixed(2)} ms, p99 ${load.p99.toFixed(2)} ms, ` +
      `server CPU ${row.cpuPerRequest.toFixed(3)} ms/req (${row.cpuPercent.toFixed(0)}%), ` +
      `RSS ${(statusKb(pid, 'VmRSS') / 1024).toFixed(0)} MB (anonymous ${(statusKb(pid, 'RssAnon') / 1024).toFixed(0)} MB; ` +
      `peak so far ${(statusKb(pid, 'VmHWM') / 1024).toFixed(0)} MB)` +
      (bad > 0 ? `, ${bad} non-2xx/errors ${JSON.stringify(load.statuses)}` : ''),
  );
  if (options.smoke) assertSmokeLoad(spec, load);
  return row;
}

/**
 * A smoke run's check of one measured run: something answered, nothing failed to answer, and every
 * status is 2xx or one the scenario expects. Latency and throughput are never judged.
 */
export function assertSmokeLoad(
  spec: Pick<ScenarioSpec, 'label' | 'expectedStatuses'>,
  load: LoadResult,
): void {
  const unexpected = Object.entries(load.statuses).filter(([status]) => {
    const code = Number(status);
    return (code < 200 || code > 299) && !(spec.expectedStatuses ?? []).includes(code);
  });
  if (load.ok === 0 || load.errors > 0 || unexpected.length > 0) {
    throw new Error(
      `smoke: ${spec.label}: ${load.ok} 2xx, ${load.errors} errors (no answer, timeouts), statuses ${JSON.stringify(load.statuses)}` +
        (spec.expectedStatuses === undefined
          ? ''
          : `; expected besides 2xx: ${spec.expectedStatuses.join(', ')}`),
    );
  }
}

/** The rounds of one scenario as one row: requests, seconds and CPU add up. */
export function mergeRows(name: string, label: string, rounds: readonly Row[]): Row {
  const first = rounds[0];
  if (first === undefined) throw new Error(`no rounds of ${name}`);
  const load = mergeLoads(rounds.map((row) => row.load));
  const cpuTotal = rounds.reduce((sum, row) => sum + row.cpuTotal, 0);
  const row: Row = {
    ...first,
    name,
    label: `${label} (${rounds.length} rounds)`,
    load,
    cpuTotal,
    cpuPerRequest: cpuTotal / Math.max(1, load.ok),
    cpuPercent: (cpuTotal / (load.seconds * 1000)) * 100,
  };
  const dbCpu = rounds
    .map((round) => (round.dbCpuPerRequest ?? 0) * round.load.ok)
    .reduce((a, b) => a + b, 0);
  if (first.dbCpuPerRequest !== undefined) row.dbCpuPerRequest = dbCpu / Math.max(1, load.ok);
  return row;
}

/** A GET of each path in turn, shared by all connections so they do not read the same rows in step. */
export function cycling(paths: readonly string[], headers?: Record<string, string>): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'GET',
      ...(headers === undefined ? {} : { headers }),
      setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] as string }),
    },
  ];
}
