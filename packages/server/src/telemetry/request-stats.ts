import type client from 'prom-client';

interface Series {
  labels: { route: string; method: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative; summed up at scrape time). */
  buckets: number[];
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** The shape prom-client's registry reads from a metric when it renders the exposition text. */
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: MetricValue[];
}

/**
 * Request count and latency histogram for the hot path. prom-client hashes the label values on every
 * `inc`/`observe` (docs/decisions/operations.md, "Request metrics without prom-client's labels"); here a
 * request costs one Map lookup and a few additions, and the exposition is built at scrape time.
 */
export class RequestStats {
  private readonly series = new Map<string, Series>();

  constructor(private readonly bounds: readonly number[]) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${status} ${method} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        labels: { route, method, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Array<number>(this.bounds.length + 1).fill(0),
      };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > (this.bounds[bucket] as number)) bucket++;
    series.buckets[bucket] = (series.buckets[bucket] ?? 0) + 1;
  }

  /** Registers `<counterName>` (counter) and `<histogramName>` (histogram) with the registry. */
  register(registry: client.Registry, counterName: string, histogramName: string): void {
    const counter = {
      name: counterName,
      help: 'HTTP requests answered, by route template, method and status',
      type: 'counter' as const,
      get: async (): Promise<CollectedMetric> => ({
        name: counterName,
        help: counter.help,
        type: 'counter',
        aggregator: 'sum',
        values: [...this.series.values()].map((series) => ({ value: series.count, labels: series.labels })),
      }),
    };
    const histogram = {
      name: histogramName,
      help: 'Time from request received to response sent, by route template, method and status',
      type: 'histogram' as const,
      get: async (): Promise<CollectedMetric> => {
        const values: MetricValue[] = [];
        for (const series of this.series.values()) {
          let cumulative = 0;
          this.bounds.forEach((bound, index) => {
            cumulative += series.buckets[index] ?? 0;
            values.push({
              metricName: `${histogramName}_bucket`,
              value: cumulative,
              labels: { le: bound, ...series.labels },
            });
          });
          values.push({
            metricName: `${histogramName}_bucket`,
            value: series.count,
            labels: { le: '+Inf', ...series.labels },
          });
          values.push({ metricName: `${histogramName}_sum`, value: series.sum, labels: series.labels });
          values.push({ metricName: `${histogramName}_count`, value: series.count, labels: series.labels });
        }
        return { name: histogramName, help: histogram.help, type: 'histogram', aggregator: 'sum', values };
      },
    };
    // prom-client's registry renders any object with name, help, type and get(); its type names only its own classes.
    registry.registerMetric(counter as unknown as client.Metric);
    registry.registerMetric(histogram as unknown as client.Metric);
  }
}
