import type autocannon from 'autocannon';
import { commitCounter } from '../commit-counter.js';
import type { Row } from '../measure.js';
import { log, spawnNode, tsx, waitForMessage } from '../processes.js';
import {
  echoInvocation,
  jsonAs,
  measureRegistry,
  medianAndP99,
  responseNotes,
  type ActorContext,
} from './context.js';

/**
 * Queue invocation: autocannon invokes, a worker process (queue-worker.ts) long-polls, accepts and
 * reports. The added latency is each round trip less the worker's own time, which it sends back in the
 * task's output; on PostgreSQL the write transactions per invocation are counted too.
 */
export async function queueScenario(context: ActorContext): Promise<Row[]> {
  if (!context.wanted('queue')) return [];
  const { options, database } = context;
  const { invoker, queueAgent } = context.actors;
  const worker = spawnNode(
    tsx('queue-worker.ts').concat([context.base, queueAgent.token]),
    {},
    context.processLog,
    true,
  );
  context.children.push(worker);
  await waitForMessage(worker, 'ready');
  const rows: Row[] = [];
  for (const connections of [1, options.connections]) {
    const added: number[] = [];
    const workerTime = responseNotes<number>((ms, workerMs) => added.push(ms - workerMs));
    const commits = options.db === 'postgres' ? await commitCounter(database.url) : undefined;
    await commits?.start();
    const invokeRequests: autocannon.Request[] = [
      {
        method: 'POST',
        path: '/api/invoke',
        headers: jsonAs(invoker),
        body: JSON.stringify(echoInvocation(queueAgent)),
        onResponse: (status, body) =>
          workerTime.note(
            status === 200
              ? (JSON.parse(body) as { output: { worker_ms: number } }).output.worker_ms
              : undefined,
          ),
      },
    ];
    const row = await measureRegistry(context, {
      name: connections === 1 ? 'queue-1' : 'queue',
      label: `queue invocation round trip (${connections} invoker connection${connections === 1 ? '' : 's'})`,
      connections,
      load: { requests: invokeRequests, onLatency: workerTime.onLatency },
      note: 'CPU per invocation covers its 4 requests (invoke, poll, accept, result)',
      beforeMeasure: () => {
        added.length = 0;
      },
    });
    const { p50, p99 } = medianAndP99(added);
    row.extra = { addedP50: p50, addedP99: p99 };
    log(`  added latency: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
    const counted = await commits?.stop();
    if (counted !== undefined) {
      row.extra.commitsPerInvocation = counted.perInvocation;
      log(
        `  commits: ${counted.perInvocation.toFixed(2)} write transactions per invocation (${counted.writeTransactions} for ${counted.invocations} tasks)`,
      );
    }
    rows.push(row);
  }
  worker.send({ type: 'stop' });
  const stats = await waitForMessage<Record<string, number>>(worker, 'stats');
  log(`  worker: ${JSON.stringify(stats)}`);
  for (const row of rows) row.extra = { ...row.extra, acceptP50: stats.acceptP50 as number };
  return rows;
}
