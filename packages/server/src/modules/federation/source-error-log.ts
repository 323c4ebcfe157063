import type { SourceRefresher } from './federation-jobs.js';

/** A source's status as the log reports it. */
export interface SourceErrorReport {
  id: string;
  state: string;
  last_error: string;
}

/**
 * The refreshers, each reporting after its round every source whose last error is new since the
 * last report: the first round after a start reports every error stored. This is where an operator
 * reads error texts without a token (docs/federation.md, "Operator status"): the public status shows
 * none, since they quote what remote hosts answered.
 */
export function reportingSourceErrors(
  refreshers: readonly SourceRefresher[],
  read: () => Promise<readonly { id: string; state: string; last_error: string | null }[]>,
  report: (source: SourceErrorReport) => void,
): SourceRefresher[] {
  const reported = new Map<string, string>();
  const reportNew = async (): Promise<void> => {
    for (const source of await read()) {
      if (source.last_error === null) reported.delete(source.id);
      else if (reported.get(source.id) !== source.last_error) {
        reported.set(source.id, source.last_error);
        report({ id: source.id, state: source.state, last_error: source.last_error });
      }
    }
  };
  return refreshers.map((refresher) => ({
    refreshAll: async (signal?: AbortSignal) => {
      try {
        await refresher.refreshAll(signal);
      } finally {
        await reportNew();
      }
    },
  }));
}
