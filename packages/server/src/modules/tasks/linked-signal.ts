import { setMaxListeners } from 'node:events';

/**
 * An AbortSignal that aborts when any of `sources` does, released by `dispose`. Unlike
 * AbortSignal.any, it leaves no trace on a long-lived source once disposed (Node 20 keeps those).
 */
export function linkedSignal(...sources: AbortSignal[]): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  for (const source of sources) {
    if (source.aborted) controller.abort();
    else source.addEventListener('abort', abort, { once: true });
  }
  return {
    signal: controller.signal,
    dispose: () => {
      for (const source of sources) source.removeEventListener('abort', abort);
    },
  };
}

/** A controller whose signal every concurrent wait listens to: no listener-count warning for it. */
export function longLivedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
