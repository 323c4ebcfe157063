import type { Db } from '../../db/connect.js';
import { every, type BackgroundJobs } from '../../kernel/periodic.js';
import type { FederatedIndex, FederatedIndexState } from './federated-index.js';
import { anyRemoteEntry } from './remote-entries-store.js';

/** What refreshes every source: the importers and peer followers, one after another. */
export interface SourceRefresher {
  refreshAll(signal?: AbortSignal): Promise<void>;
}

/**
 * Every configured source once soon after start, then every `intervalMs` (never two rounds at once).
 * Nothing runs when no source is configured.
 */
export function startFederationJobs(
  refreshers: readonly SourceRefresher[],
  intervalMs: number,
  onError: (error: unknown) => void,
): BackgroundJobs {
  if (refreshers.length === 0) return { stop: async () => {} };
  const round = async (signal: AbortSignal): Promise<void> => {
    for (const refresher of refreshers) {
      if (signal.aborted) return;
      await refresher.refreshAll(signal);
    }
  };
  const first = new AbortController();
  const starting = round(first.signal).catch(onError);
  const timer = every(intervalMs, round, onError);
  return {
    stop: async () => {
      first.abort();
      await starting;
      await timer.stop();
    },
  };
}

/**
 * Starts loading the federated index now, in the background, when there is anything federated: a
 * configured source or a remote entry already stored. Otherwise it is loaded on the first federated
 * search. stop() aborts a load in progress and waits for it.
 */
export async function startFederatedIndexLoad(
  db: Db,
  index: FederatedIndex,
  hasSources: boolean,
  onLoaded: (status: FederatedIndexState, ms: number) => void,
  onError: (error: unknown) => void,
): Promise<BackgroundJobs> {
  if (!hasSources && !(await anyRemoteEntry(db))) return { stop: async () => {} };
  const controller = new AbortController();
  const started = Date.now();
  const loading = index.load(controller.signal).then(() => {
    if (!controller.signal.aborted) onLoaded(index.status(), Date.now() - started);
  }, onError);
  return {
    stop: async () => {
      controller.abort();
      await loading;
    },
  };
}
