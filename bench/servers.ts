import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, spawnNode, tsx, waitForHttp } from './processes.js';

/** The servers a run measures: the registry as its own process, and the reference servers beside it. */

export interface RegistryLaunch {
  databaseUrl: string;
  port: number;
  publicUrl: string;
  /** Seeded agents: the node loads its search index before it listens, so start-up grows with them. */
  agents: number;
  processLog: string;
  /** Where `--cpu-prof` writes the registry's V8 profile, if asked. */
  cpuProfileDir?: string;
  /** Node.js flags for the registry process (`--registry-node-flags`). */
  nodeFlags: string[];
}

/**
 * Starts node packages/server/dist/main.js on the run's database and waits until /readyz answers. The
 * process joins `children` before the wait, so that the runner stops it also when it never gets ready.
 */
export async function startRegistry(launch: RegistryLaunch, children: ChildProcess[]): Promise<ChildProcess> {
  const args = [...launch.nodeFlags, path.join(ROOT, 'packages/server/dist/main.js')];
  if (launch.cpuProfileDir !== undefined)
    args.unshift('--cpu-prof', `--cpu-prof-dir=${launch.cpuProfileDir}`);
  const server = spawnNode(
    args,
    {
      DATABASE_URL: launch.databaseUrl,
      PORT: String(launch.port),
      HOST: '127.0.0.1',
      PUBLIC_URL: launch.publicUrl,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      REVIEW_RATE_LIMIT: '100000',
      // The load generator registers tens of thousands of agents from one address.
      REGISTRATION_RATE_LIMIT: '1000000',
      REGISTRATION_PREFIX_RATE_LIMIT: '1000000',
      // One caller invokes for the whole run: the limits are checked on every call but never reached.
      INVOKE_RATE_LIMIT: '10000000',
      INVOKE_RATE_MB: '10000000',
      TASK_MAX_OPEN_PER_CALLER: '100000',
      NODE_ENV: 'production',
    },
    launch.processLog,
  );
  children.push(server);
  // About 4 s per 100,000 agents on an idle core; the margin (0.5 ms an agent, 500 s at a million)
  // covers a machine shared with other runs. A server that exits fails the wait at once.
  await waitForHttp(`http://127.0.0.1:${launch.port}/readyz`, server, Math.max(30_000, launch.agents / 2));
  return server;
}

/**
 * Starts one of the reference servers (baseline-server.ts, fastify-floor-server.ts) on the same
 * database; the caller waits for it to answer.
 */
export function startReferenceServer(
  file: string,
  launch: Pick<RegistryLaunch, 'databaseUrl' | 'port' | 'publicUrl' | 'processLog'>,
): ChildProcess {
  return spawnNode(
    tsx(file).concat([launch.databaseUrl, String(launch.port), launch.publicUrl]),
    {},
    launch.processLog,
  );
}
