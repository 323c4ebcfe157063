import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** How often the checkpoint thread copies the WAL back into the database file. */
const CHECKPOINT_INTERVAL_MS = 500;
/**
 * The WAL file is cut back to this size after the checkpoints have caught up. Past it, the request
 * connection checkpoints at commit again (see below).
 */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

// CommonJS run by the worker thread (eval), so it needs no loader and works from src (tests) and dist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Moves SQLite's WAL checkpoints off the event loop. SQLite checkpoints inside the commit that crosses 1,000
 * WAL pages, stalling the event loop (docs/decisions/performance.md, "SQLite checkpoints"). Instead, the
 * request connection stops checkpointing and a worker thread with its own connection runs a PASSIVE
 * checkpoint (it never waits for, nor blocks, readers and the writer) twice a second.
 *
 * A PASSIVE checkpoint cannot start the WAL over while commits keep coming (the last frame is always
 * newer than its pass), so under a steady write load the WAL would grow without bound and every read
 * would search a longer WAL index. So the request connection still checkpoints at commit, but only past
 * the size limit: by then the thread has copied all but the last few frames, and the commit that finishes
 * the copy lets the next one start the WAL over. If the thread fails, the connection checkpoints at
 * SQLite's usual 1,000 pages again.
 */
export function startCheckpointer(
  sqlite: SqliteDatabase.Database,
  file: string,
  onError: (error: Error) => void,
  { walLimitBytes = WAL_SIZE_LIMIT_BYTES, intervalMs = CHECKPOINT_INTERVAL_MS } = {},
): Checkpointer {
  sqlite.pragma(`journal_size_limit = ${walLimitBytes}`);
  const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
  sqlite.pragma(`wal_autocheckpoint = ${Math.max(1, Math.floor(walLimitBytes / pageSize))}`);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs,
    },
  });
  worker.unref();
  let stopping = false;
  let fellBack = false;
  const fallBack = (error: Error) => {
    if (stopping || fellBack) return;
    fellBack = true;
    if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
    onError(error);
  };
  worker.on('message', (message: { error?: string }) => {
    if (message.error !== undefined) onError(new Error(`WAL checkpoint failed: ${message.error}`));
  });
  worker.on('error', fallBack);
  worker.on('exit', (code) => fallBack(new Error(`the WAL checkpoint thread exited (${code})`)));
  return {
    stop: async () => {
      if (stopping) return;
      stopping = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.ref(); // keep the process alive until the thread has closed its connection
      worker.postMessage('stop');
      await exited;
    },
  };
}
