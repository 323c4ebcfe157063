import type autocannon from 'autocannon';
import { registerActor, type Actor } from '../client.js';
import type { Row } from '../measure.js';
import { measureRegistry, type ScenarioContext } from './context.js';

/**
 * Review submission (SQLite runs): 100 reviewers registered over HTTP, each seeded agent reviewed at
 * most once per reviewer, every request a new (reviewer, target, rating, comment).
 */
export async function reviewScenario(context: ScenarioContext): Promise<Row[]> {
  if (context.options.db !== 'sqlite' || !context.wanted('review')) return [];
  const reviewers: Actor[] = [];
  for (let i = 0; i < 100; i++)
    reviewers.push(await registerActor(context.base, `Bench reviewer ${i}`, [{ type: 'general' }]));
  const targets = context.seededDids;
  // (n * 7919) mod N is a permutation of the targets, so a reviewer meets a target again only after N requests.
  let n = 0;
  const reviewRequests: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/api/reviews',
      setupRequest: (request) => {
        const reviewer = reviewers[n % reviewers.length] as Actor;
        const target = targets[(n * 7919) % targets.length] as string;
        n++;
        return {
          ...request,
          headers: { authorization: `Bearer ${reviewer.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            target_did: target,
            rating: (100 + (n % 901)) / 100,
            comment: `Benchmark review ${n}`,
          }),
        };
      },
    },
  ];
  return [
    await measureRegistry(context, {
      name: 'review',
      label: 'review submission',
      connections: context.options.connections,
      load: { requests: reviewRequests },
      note: '404s are reviews of the 2% deactivated seed agents',
      expectedStatuses: [404],
    }),
  ];
}
