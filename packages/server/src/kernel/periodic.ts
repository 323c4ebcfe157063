/** Timers owned by the context: stop() ends them and waits for a run in progress. */
export interface BackgroundJobs {
  stop(): Promise<void>;
}

/** Runs `run` every `intervalMs`, never two runs at once; stop() aborts a run in progress and awaits it. */
export function every(
  intervalMs: number,
  run: (signal: AbortSignal) => Promise<unknown>,
  onError: (error: unknown) => void,
): BackgroundJobs {
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running !== undefined || controller.signal.aborted) return;
    running = run(controller.signal)
      .then(
        () => undefined,
        (error: unknown) => onError(error),
      )
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      controller.abort();
      clearInterval(timer);
      await running;
    },
  };
}
