import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ValidationAnswer, ValidationJob, ValidationStarted, WorkerReady } from './validation-worker.js';

export type InputVerdict = { valid: true } | { valid: false; details: string };

/** The validation ran past its time limit; the worker running it was stopped. */
export class ValidationTimeoutError extends Error {}
/** The schema does not compile (a schema stored before today's rules). */
export class UnusableSchemaError extends Error {}
/** Too many validations are waiting, or the worker died (e.g. out of memory) while validating. */
export class ValidationUnavailableError extends Error {}

export interface ValidatorPoolOptions {
  /** Worker threads; each runs one validation at a time. */
  size: number;
  /** Hard limit for one validation, from when the worker has the compiled schema and starts validating. */
  timeoutMs: number;
  /** Limit for parsing the input and compiling the schema (bounded by the schema limits, so generous). */
  prepareTimeoutMs: number;
  /** Validations allowed to wait for a worker; more are refused at once. */
  maxQueued: number;
  /** Byte budget of each worker's compiled-schema cache. */
  cacheBytes: number;
  /** Heap of each worker, so a runaway validation ends that worker, not the process. */
  maxHeapMb: number;
}

interface Job {
  message: ValidationJob;
  resolve(verdict: InputVerdict): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded and can take a job; until then jobs wait in the queue. */
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
}

// Built, the worker is the .js file beside this one. Run from TypeScript sources (tests, bench, under
// tsx), Node 20 does not apply `--import tsx` to worker threads, so the worker registers tsx first.
const FROM_SOURCES = path.extname(fileURLToPath(import.meta.url)) === '.ts';
const WORKER_URL = new URL(`./validation-worker${FROM_SOURCES ? '.ts' : '.js'}`, import.meta.url);
const SOURCES_BOOTSTRAP = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`;

function startWorker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  return FROM_SOURCES
    ? new Worker(SOURCES_BOOTSTRAP, { ...options, eval: true })
    : new Worker(WORKER_URL, options);
}

/**
 * Validates invocation input in worker threads with a hard time limit: however costly a schema and an
 * input are together (an enum of thousands checked against every item, an anyOf of hundreds of
 * branches), the event loop is never blocked, and a validation past its limit is stopped by ending
 * its worker. Workers start on first use and never keep the process alive.
 */
export class ValidatorPool {
  private readonly slots: (Slot | undefined)[];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: ValidatorPoolOptions) {
    this.slots = new Array<Slot | undefined>(options.size).fill(undefined);
  }

  /** Input as JSON text: copying a string to the worker is cheaper than cloning the object graph. */
  validate(schemaJson: string, inputJson: string): Promise<InputVerdict> {
    return this.submit(schemaJson, inputJson);
  }

  /** Compiles a schema in a worker; rejects with UnusableSchemaError when it does not compile. */
  async check(schemaJson: string): Promise<void> {
    await this.submit(schemaJson, undefined);
  }

  private submit(schemaJson: string, inputJson: string | undefined): Promise<InputVerdict> {
    if (this.closed) return Promise.reject(new ValidationUnavailableError('the validator pool is closed'));
    if (this.queue.length >= this.options.maxQueued) {
      return Promise.reject(new ValidationUnavailableError('too many validations are waiting'));
    }
    const message: ValidationJob = { id: this.nextId++, schema: schemaJson };
    if (inputJson !== undefined) message.input = inputJson;
    return new Promise((resolve, reject) => {
      this.queue.push({ message, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new ValidationUnavailableError('shutting down'));
    await Promise.all(
      this.slots.map(async (slot, index) => {
        if (slot === undefined) return;
        this.slots[index] = undefined;
        clearTimeout(slot.timer);
        slot.job?.reject(new ValidationUnavailableError('shutting down'));
        await slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    for (let index = 0; index < this.slots.length && this.queue.length > 0; index++) {
      const slot = this.slots[index] ?? this.spawn(index);
      if (!slot.ready || slot.job !== undefined) continue;
      const job = this.queue.shift() as Job;
      slot.job = job;
      this.limit(index, slot, job, this.options.prepareTimeoutMs);
      slot.worker.postMessage(job.message);
    }
  }

  /** Ends the job (and its worker) unless it answers within `ms`; replaces any earlier limit. */
  private limit(index: number, slot: Slot, job: Job, ms: number): void {
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      this.retire(index, slot);
      job.reject(new ValidationTimeoutError(`validation took longer than ${this.options.timeoutMs} ms`));
      this.dispatch();
    }, ms);
  }

  private spawn(index: number): Slot {
    const worker = startWorker({
      workerData: { cacheBytes: this.options.cacheBytes },
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb },
    });
    worker.unref();
    const slot: Slot = { worker, ready: false };
    worker.on('message', (answer: ValidationAnswer | ValidationStarted | WorkerReady) => {
      if ('ready' in answer) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const job = slot.job;
      if (job === undefined || job.message.id !== answer.id) return;
      if ('validating' in answer) {
        this.limit(index, slot, job, this.options.timeoutMs);
        return;
      }
      clearTimeout(slot.timer);
      slot.job = undefined;
      if ('unusable' in answer) job.reject(new UnusableSchemaError(answer.unusable));
      else job.resolve(answer.valid ? { valid: true } : { valid: false, details: answer.details });
      this.dispatch();
    });
    // A worker that dies (out of memory, a crash) fails its job; the next job gets a new worker.
    const died = (error?: Error): void => {
      if (this.slots[index] !== slot) return;
      const job = slot.job;
      this.retire(index, slot);
      const reason = new ValidationUnavailableError(error?.message ?? 'the validation worker stopped');
      job?.reject(reason);
      // A worker that could not even start would fail the same way again: fail what waits instead of
      // respawning in a loop; the next validation tries a new worker.
      if (!slot.ready) for (const waiting of this.queue.splice(0)) waiting.reject(reason);
      else if (!this.closed) this.dispatch();
    };
    worker.on('error', died);
    worker.on('exit', () => died());
    this.slots[index] = slot;
    return slot;
  }

  private retire(index: number, slot: Slot): void {
    clearTimeout(slot.timer);
    slot.job = undefined;
    if (this.slots[index] === slot) this.slots[index] = undefined;
    void slot.worker.terminate();
  }
}
