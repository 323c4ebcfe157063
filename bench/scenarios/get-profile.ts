import { cycling, measure, mergeRows, type Row } from '../measure.js';
import { log, stop, waitForHttp } from '../processes.js';
import { assertSameProfiles } from '../reference-answers.js';
import { startReferenceServer } from '../servers.js';
import type { ScenarioContext } from './context.js';

/** Sampled profiles the three servers must answer alike before anything is measured. */
const COMPARED_PROFILES = 200;

/**
 * GET /api/agents/{did}, side by side: a bare node:http baseline and a bare-Fastify floor answer the
 * same JSON from the same database, so the registry's figure reads as a share of the least this stack
 * can do. Only after the three are seen to answer alike is anything measured.
 */
export async function getProfileScenario(context: ScenarioContext): Promise<Row[]> {
  if (!context.wanted('get')) return [];
  const { base, options, ports } = context;
  const launch = {
    databaseUrl: context.database.url,
    publicUrl: context.publicUrl,
    processLog: context.processLog,
  };
  const baseline = startReferenceServer('baseline-server.ts', { ...launch, port: ports.baseline });
  const floor = startReferenceServer('fastify-floor-server.ts', { ...launch, port: ports.floor });
  context.children.push(baseline, floor);
  const baselineBase = `http://127.0.0.1:${ports.baseline}`;
  const floorBase = `http://127.0.0.1:${ports.floor}`;
  await waitForHttp(`${baselineBase}/api/agents/none`, baseline);
  await waitForHttp(`${floorBase}/api/agents/none`, floor);

  const profilePaths = context.sampleDids.map((did) => `/api/agents/${encodeURIComponent(did)}`);
  const compared = await assertSameProfiles(
    { name: 'the registry', base },
    [
      { name: 'the baseline (node:http)', base: baselineBase },
      { name: 'the Fastify floor', base: floorBase },
    ],
    [...new Set(profilePaths)].slice(0, COMPARED_PROFILES),
  );
  log(`baseline, Fastify floor and registry answer the same JSON for the same ${compared} DIDs`);

  const targets: { target: Row['target']; origin: string; pid: number; name: string; label: string }[] = [
    {
      target: 'baseline',
      origin: baselineBase,
      pid: baseline.pid as number,
      name: 'baseline-get',
      label: 'baseline GET profile (node:http)',
    },
    {
      target: 'floor',
      origin: floorBase,
      pid: floor.pid as number,
      name: 'floor-get',
      label: 'Fastify floor GET profile (bare Fastify)',
    },
    { target: 'registry', origin: base, pid: context.pid, name: 'get', label: 'GET profile' },
  ];
  // Two rounds, interleaved, so a slow patch of the machine does not land on one server only (one in
  // a smoke run, which measures nothing).
  const rounds = new Map<string, Row[]>();
  for (let round = 0; round < (options.smoke ? 1 : 2); round++) {
    for (const item of targets) {
      const row = await measure(
        item.origin,
        item.pid,
        item.target,
        {
          name: item.name,
          label: `${item.label}, round ${round + 1}`,
          connections: options.connections,
          load: { requests: cycling(profilePaths) },
          ...(round === 0 ? {} : { warmup: false as const }),
        },
        options,
      );
      rounds.set(item.name, [...(rounds.get(item.name) ?? []), row]);
    }
  }
  await stop(baseline);
  await stop(floor);
  return targets.map((item) => mergeRows(item.name, item.label, rounds.get(item.name) ?? []));
}
