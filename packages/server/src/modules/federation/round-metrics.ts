import type { Db } from '../../db/connect.js';
import type { FederationSourceKind, OperationsMetrics } from '../../telemetry/operations-metrics.js';
import type { SourceRefresher } from './federation-jobs.js';
import { countEntriesByKind, readSources } from './remote-sources-store.js';

/**
 * A refresher whose every round is measured: its duration and outcome, then the sources' states and
 * the entries stored, read once per round (never at a scrape), all labelled by source kind only.
 */
export function measuringRounds(
  db: Db,
  kind: FederationSourceKind,
  refresher: SourceRefresher,
  metrics: OperationsMetrics,
): SourceRefresher {
  return {
    refreshAll: async (signal?: AbortSignal) => {
      const started = performance.now();
      let failed = true;
      try {
        await refresher.refreshAll(signal);
        failed = false;
      } finally {
        metrics.federationRound(kind, (performance.now() - started) / 1000, failed);
        const [sources, entries] = await Promise.all([readSources(db), countEntriesByKind(db)]).catch(
          () => [undefined, undefined] as const,
        );
        if (sources !== undefined && entries !== undefined) metrics.federationStatus(kind, sources, entries);
      }
    },
  };
}
