import type { ChildProcess } from 'node:child_process';
import type { Actor } from '../client.js';
import type { BenchDatabase } from '../database.js';
import { percentile } from '../load.js';
import { measure, type Row, type ScenarioSpec } from '../measure.js';
import type { Options } from '../options.js';

/** What the runner hands every scenario, and the helpers the scenarios share. */

export interface Ports {
  /** The registry. */
  registry: number;
  /** The bare node:http baseline (get-profile.ts). */
  baseline: number;
  /** The webhook agent's server (actors.ts). */
  hook: number;
  /** The bare-Fastify floor (get-profile.ts). */
  floor: number;
}

export interface ScenarioContext {
  /** The registry's origin, e.g. http://127.0.0.1:19400. */
  base: string;
  /** The registry's PUBLIC_URL: the reference servers must put the same URLs in their answers. */
  publicUrl: string;
  /** The registry's process: its CPU is read from /proc/<pid>. */
  pid: number;
  ports: Ports;
  options: Options;
  /** Whether `--only` asks for this scenario (or no `--only` was given). */
  wanted(name: string): boolean;
  database: BenchDatabase;
  /** Every seeded agent's DID, in seed order. */
  seededDids: readonly string[];
  /** 20,000 seeded DIDs drawn at random: the profiles and agent pages the read scenarios cycle through. */
  sampleDids: readonly string[];
  /** A scenario's child processes go here, so the runner stops them even when the run fails. */
  children: ChildProcess[];
  /** The file every child process writes its output to. */
  processLog: string;
}

/** Clients registered over HTTP after the GET profile scenario, used by the invocation scenarios. */
export interface Actors {
  invoker: Actor;
  /** Delivers by queue: a queue-worker.ts process claims its tasks. */
  queueAgent: Actor;
  /** Delivers by webhook to webhook-server.ts. */
  hookAgent: Actor;
  /** A completed task of the invoker's, read by the authenticated GET. */
  taskId: string;
}

export interface ActorContext extends ScenarioContext {
  actors: Actors;
}

/** A scenario measures what `--only` asks of it and returns its rows, in the order it ran them. */
export type Scenario = (context: ActorContext) => Promise<Row[]>;

/** One measured run against the registry process (not a reference server). */
export function measureRegistry(
  context: ScenarioContext,
  spec: ScenarioSpec,
  options: Options = context.options,
): Promise<Row> {
  return measure(context.base, context.pid, 'registry', spec, options);
}

/**
 * A row's name and label at `connections`: at one connection the name ends in `-1` and the label says
 * "(1 connection)", which is how report.ts, growth.ts and the search budgets find the single-connection
 * figure of a scenario.
 */
export function atConnections(
  name: string,
  label: string,
  connections: number,
): Pick<ScenarioSpec, 'name' | 'label' | 'connections'> {
  return connections === 1
    ? { name: `${name}-1`, label: `${label} (1 connection)`, connections }
    : { name, label, connections };
}

/**
 * Pairs what a response's body says with that response's latency. A request's `onResponse` (which
 * sees the body) runs just before load.ts's `onLatency` (which sees the time) for the same response, so
 * the note taken in the first is filed with the latency of the second, then forgotten.
 */
export function responseNotes<Note>(file: (ms: number, note: Note) => void): {
  note(value: Note | undefined): void;
  onLatency(ms: number): void;
} {
  let pending: Note | undefined;
  return {
    note: (value) => {
      pending = value;
    },
    onLatency: (ms) => {
      if (pending !== undefined) file(ms, pending);
      pending = undefined;
    },
  };
}

/** Sorts `samples` in place and reads their median and 99th percentile. */
export function medianAndP99(samples: number[]): { p50: number; p99: number } {
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** The echo invocation every invocation scenario sends: one small input, a deadline well past any run. */
export const echoInvocation = (target: Actor) => ({
  target_did: target.did,
  capability: 'echo',
  input: { n: 1 },
  timeout_ms: 10_000,
});

/** Headers of an authenticated JSON request. */
export const jsonAs = (caller: Actor): Record<string, string> => ({
  authorization: `Bearer ${caller.token}`,
  'content-type': 'application/json',
});
