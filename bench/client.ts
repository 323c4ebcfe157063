import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { ed25519Identity, ed25519RegistrationBody, registrationBodies } from './keys.js';
import { log, spawnNode, tsx } from './processes.js';

/** The bench as a registry client: JSON calls, actors registered over HTTP, pre-signed registrations. */

export interface Json {
  [key: string]: unknown;
}

export async function call(
  base: string,
  method: string,
  url: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; json: Json }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? {} : (JSON.parse(text) as Json) };
}

export async function expectStatus(
  label: string,
  promise: Promise<{ status: number; json: Json }>,
  status: number,
): Promise<Json> {
  const reply = await promise;
  if (reply.status !== status) throw new Error(`${label}: ${reply.status} ${JSON.stringify(reply.json)}`);
  return reply.json;
}

export interface Actor {
  did: string;
  token: string;
}

export async function registerActor(base: string, name: string, capabilities: Json[]): Promise<Actor> {
  const body = ed25519RegistrationBody(
    ed25519Identity(),
    { name, description: `${name} (benchmark actor)`, capabilities: capabilities as never, tags: ['bench'] },
    Date.now(),
  );
  const json = await expectStatus(`register ${name}`, call(base, 'POST', '/api/agents/register', body), 201);
  return { did: json.did as string, token: json.token as string };
}

/** Signed registration bodies for a run, made by one child process per core before it starts. */
/** The child's exit code, or 'timeout' if it has not exited within `timeoutMs`. */
export function exitWithin(child: ChildProcess, timeoutMs: number): Promise<number | 'timeout'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? -1);
    });
  });
}

export async function pregenerate(
  keyType: 'ed25519' | 'secp256k1',
  count: number,
  seed: number,
  logFile: string,
): Promise<string[]> {
  // The registry accepts a registration timestamp within 5 minutes either side of its clock, and checks
  // it the same way whatever its value. Stamped 4 minutes ahead, every body stays valid until 9 minutes
  // after it was made: a slow run (a million agents, a busy machine) once sent its last fifth stale.
  const timestamp = Date.now() + 4 * 60_000;
  const processes = Math.max(1, Math.min(os.availableParallelism(), 4));
  const share = Math.ceil(count / processes);
  const parts = await Promise.all(
    Array.from({ length: processes }, async (_, index) => {
      const partSeed = seed + index * 1_000_003;
      const file = path.join(os.tmpdir(), `registry-bench-bodies-${process.pid}-${index}.json`);
      const child = spawnNode(
        tsx('keygen-worker.ts').concat([keyType, String(share), String(timestamp), String(partSeed), file]),
        {},
        logFile,
      );
      const exited = await exitWithin(child, 60_000);
      if (exited !== 0) {
        // A child once stalled at start-up (never reproduced alone); the run goes on without it.
        child.kill('SIGKILL');
        log(`key generator ${child.pid} did not finish (${exited}); generating its share here`);
        return registrationBodies(keyType, share, timestamp, partSeed);
      }
      const bodies = JSON.parse(fs.readFileSync(file, 'utf8')) as string[];
      fs.rmSync(file, { force: true });
      return bodies;
    }),
  );
  return parts.flat().slice(0, count);
}
