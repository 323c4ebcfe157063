import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** How often the checkpoint thread copies the WAL back into the database file. */
const CHECKPOINT_INTERVAL_MS = 500;
/** The WAL file is cut back to this size after the checkpoints have caught up. */
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
 * Moves SQLite's WAL checkpoints off the event loop. SQLite checkpoints inside the commit that
 * crosses 1,000 WAL pages: at 100,000 agents that cost a registration about 240 µs of CPU and 330 µs
 * of fsync on average, in stalls of tens of milliseconds (bench/RESULTS.md). Instead, the request
 * connection stops checkpointing and a worker thread with its own connection runs a PASSIVE
 * checkpoint (it never waits for, nor blocks, readers and the writer) twice a second. If the thread
 * fails, the connection checkpoints by itself again, so the WAL cannot grow without bound.
 */
export function startCheckpointer(
  sqlite: SqliteDatabase.Database,
  file: string,
  onError: (error: Error) => void,
): Checkpointer {
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  sqlite.pragma('wal_autocheckpoint = 0');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs: CHECKPOINT_INTERVAL_MS,
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
