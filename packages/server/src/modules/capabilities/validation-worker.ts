import { parentPort, workerData } from 'node:worker_threads';
import { CompiledSchemas } from './compiled-schemas.js';

/**
 * Validates invocation input against capability schemas off the main thread, so that however costly
 * a schema and input are together, the event loop stays free and the pool can stop the work.
 */
export interface ValidationJob {
  id: number;
  /** Schema and input as JSON text; without input, the schema is only compiled (a publish check). */
  schema: string;
  input?: string;
}

export type ValidationAnswer =
  | { id: number; valid: true }
  | { id: number; valid: false; details: string }
  | { id: number; unusable: string };

export interface ValidationStarted {
  id: number;
  validating: true;
}

export interface WorkerReady {
  ready: true;
}

const schemas = new CompiledSchemas((workerData as { cacheBytes: number }).cacheBytes);

parentPort?.on('message', (job: ValidationJob) => {
  let answer: ValidationAnswer;
  try {
    if (job.input === undefined) {
      schemas.check(JSON.parse(job.schema) as object);
      parentPort?.postMessage({ id: job.id, valid: true } satisfies ValidationAnswer);
      return;
    }
    const validate = schemas.validator(job.schema);
    const input: unknown = JSON.parse(job.input);
    // Compiling is bounded by the schema limits; the time limit is for what the input makes it do.
    parentPort?.postMessage({ id: job.id, validating: true } satisfies ValidationStarted);
    answer = validate(input)
      ? { id: job.id, valid: true }
      : { id: job.id, valid: false, details: schemas.describe(validate) };
  } catch (error) {
    answer = { id: job.id, unusable: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});

// Loading this module (and Ajv) takes a moment; time limits start once the worker says it is ready.
parentPort?.postMessage({ ready: true } satisfies WorkerReady);
