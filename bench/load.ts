/**
 * One autocannon run, measured the way the benchmark reports it: completed 2xx requests per second
 * over the run's wall time, and latency percentiles from every response's own timing (autocannon's
 * histogram has 1 ms resolution, too coarse for sub-millisecond GETs).
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds; ignored when `amount` is given. */
  duration?: number;
  /** Stop after this many requests instead of after `duration`. */
  amount?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  requests?: autocannon.Request[];
  /** Called with each response's latency (ms) and status, after the request's onResponse. */
  onLatency?: (ms: number, status: number) => void;
  timeoutSeconds?: number;
}

export interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  /** Every 2xx latency, sorted (ms). */
  latencies: number[];
}

/** Several runs of one scenario as one: requests and seconds add up, percentiles over every sample. */
export function mergeLoads(loads: readonly LoadResult[]): LoadResult {
  const latencies = loads.flatMap((load) => load.latencies).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const load of loads) {
    for (const [status, count] of Object.entries(load.statuses))
      statuses[status] = (statuses[status] ?? 0) + count;
  }
  const seconds = loads.reduce((sum, load) => sum + load.seconds, 0);
  return {
    ok: latencies.length,
    non2xx: loads.reduce((sum, load) => sum + load.non2xx, 0),
    errors: loads.reduce((sum, load) => sum + load.errors, 0),
    statuses,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
    latencies,
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const config: autocannon.Options = {
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    method: options.method ?? 'GET',
    timeout: options.timeoutSeconds ?? 30,
  };
  if (options.amount !== undefined) config.amount = options.amount;
  else config.duration = options.duration ?? 10;
  if (options.headers !== undefined) config.headers = options.headers;
  if (options.body !== undefined) config.body = options.body;
  if (options.requests !== undefined) config.requests = options.requests;
  let finish: (result: autocannon.Result) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon(config, (error, result) => (error ? fail(error) : finish(result)));
  instance.on('response', (_client, status, _bytes, ms) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status >= 200 && status < 300) latencies.push(ms);
    options.onLatency?.(ms, status);
  });
  const result = await done;
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const ok = latencies.length;
  return {
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
    seconds,
    rps: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: ok === 0 ? Number.NaN : latencies.reduce((sum, value) => sum + value, 0) / ok,
    latencies,
  };
}
