import { cycling, type Row } from '../measure.js';
import { measureRegistry, type ActorContext } from './context.js';

/** An authenticated GET (token verified, task row read): its cost beside the anonymous GET profile. */
export async function authGetScenario(context: ActorContext): Promise<Row[]> {
  if (!context.wanted('auth-get')) return [];
  const { invoker, taskId } = context.actors;
  return [
    await measureRegistry(context, {
      name: 'auth-get',
      label: 'authenticated GET /api/tasks/{id}',
      connections: context.options.connections,
      load: { requests: cycling([`/api/tasks/${taskId}`], { authorization: `Bearer ${invoker.token}` }) },
    }),
  ];
}
