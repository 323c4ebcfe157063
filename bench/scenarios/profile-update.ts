import type autocannon from 'autocannon';
import { call, expectStatus, registerActor, type Actor } from '../client.js';
import type { Row } from '../measure.js';
import { log } from '../processes.js';
import { measureRegistry, type ScenarioContext } from './context.js';

/** How many agents take turns updating their own profile. */
const EDITORS = 200;

/**
 * Profile updates (both dialects): `PUT /api/agents/{did}` of the caller's own profile, as an agent
 * keeping its listing current would. 200 agents registered over HTTP, each with its own token, take
 * turns (an agent's next update comes 200 requests after its last, so no one row is hot); each request
 * is a small change: a new description, and every fourth request new tags as well.
 */
export async function profileUpdateScenario(context: ScenarioContext): Promise<Row[]> {
  if (!context.wanted('update')) return [];
  const started = Date.now();
  const editors: Actor[] = [];
  for (let i = 0; i < EDITORS; i++)
    editors.push(await registerActor(context.base, `Bench editor ${i}`, [{ type: 'general' }]));
  log(`registered ${EDITORS} profile editors in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const change = (n: number): { description: string; tags?: string[] } =>
    n % 4 === 0
      ? { description: `Translates documents; revision ${n}`, tags: ['bench', `rev-${n % 16}`] }
      : { description: `Translates documents; revision ${n}` };
  // One update seen to answer 200 with the change in it, before anything is measured.
  const first = editors[0] as Actor;
  const answer = await expectStatus(
    'profile update',
    call(context.base, 'PUT', `/api/agents/${encodeURIComponent(first.did)}`, change(0), first.token),
    200,
  );
  if (answer.description !== change(0).description) {
    throw new Error(`the update did not change the description: ${JSON.stringify(answer)}`);
  }
  let n = 1;
  const updateRequests: autocannon.Request[] = [
    {
      method: 'PUT',
      setupRequest: (request) => {
        const editor = editors[n % editors.length] as Actor;
        const body = JSON.stringify(change(n));
        n++;
        return {
          ...request,
          path: `/api/agents/${encodeURIComponent(editor.did)}`,
          headers: { authorization: `Bearer ${editor.token}`, 'content-type': 'application/json' },
          body,
        };
      },
    },
  ];
  return [
    await measureRegistry(context, {
      name: 'profile-update',
      label: 'profile update (PUT own profile)',
      connections: context.options.connections,
      load: { requests: updateRequests },
      note: `${EDITORS} agents, each with its own token, in turn`,
    }),
  ];
}
