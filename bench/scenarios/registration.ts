import type autocannon from 'autocannon';
import { pregenerate } from '../client.js';
import type { Row } from '../measure.js';
import { runLoad } from '../load.js';
import { log } from '../processes.js';
import { assertSmokeLoad } from '../measure.js';
import { measureRegistry, type ScenarioContext } from './context.js';

/** Pre-signed bodies per key type: measured, and spent warming up before (a smoke run's are few). */
const BODIES = {
  full: [
    ['ed25519', 30_000, 2_000],
    ['secp256k1', 4_000, 300],
  ],
  smoke: [
    ['ed25519', 1_000, 100],
    ['secp256k1', 300, 30],
  ],
} as const;

/**
 * Registration (SQLite runs), Ed25519 and secp256k1: bodies signed before the run by key generator
 * processes (client.ts, pregenerate), so the load generator only sends; a fixed number of bodies, each
 * a new key, the first `warm` of them spent warming up.
 */
export async function registrationScenarios(context: ScenarioContext): Promise<Row[]> {
  if (context.options.db !== 'sqlite' || !context.wanted('register')) return [];
  const { options } = context;
  const rows: Row[] = [];
  for (const [keyType, count, warm] of BODIES[options.smoke ? 'smoke' : 'full']) {
    const genStart = Date.now();
    const bodies = await pregenerate(
      keyType,
      count + warm,
      keyType === 'ed25519' ? 11 : 13,
      context.processLog,
    );
    log(
      `pre-signed ${bodies.length} ${keyType} registrations in ${((Date.now() - genStart) / 1000).toFixed(1)} s`,
    );
    let next = 0;
    const registerRequests: autocannon.Request[] = [
      {
        method: 'POST',
        path: '/api/agents/register',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: bodies[next++] as string }),
      },
    ];
    const warmUp = await runLoad({
      url: context.base,
      connections: options.connections,
      amount: warm,
      requests: registerRequests,
    });
    if (options.smoke) assertSmokeLoad({ label: `registration ${keyType} warm-up` }, warmUp);
    const row = await measureRegistry(context, {
      name: `register-${keyType}`,
      label: `registration ${keyType}`,
      connections: options.connections,
      load: { amount: count, requests: registerRequests },
      warmup: false,
      note: `${count} pre-signed bodies`,
    });
    const refused = row.load.statuses['400'] ?? 0;
    if (refused > 0)
      log(
        `  ${refused} registrations answered 400: bodies sent after their timestamp's 5 minutes ran out ` +
          `(${((Date.now() - genStart) / 60_000).toFixed(1)} min since they were made); req/s counts only the 201s`,
      );
    rows.push(row);
  }
  return rows;
}
