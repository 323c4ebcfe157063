/**
 * A queue-mode agent: long-polls GET /api/agent/tasks?wait=30, claims every task it gets
 * (POST .../accept), then reports the result (POST .../result) without doing any work, and polls again
 * as soon as its claims are in (results go out in the background, as a worker pool would send them).
 *
 * Its own time per task, "worker_ms", runs from the moment the poll response is in hand to the moment
 * the result request is sent, less the accept round trip (the registry's time, not the worker's). It
 * travels in the task's output, so the invoker can subtract it from its round trip (see
 * scenarios/queue.ts, "added latency"): what remains is everything the registry adds, accept included.
 *
 *   node --import tsx bench/queue-worker.ts <base url> <token>      (IPC: {type:'stop'} -> stats)
 */
import http from 'node:http';

const [base, token] = process.argv.slice(2);
if (base === undefined || token === undefined) {
  console.error('usage: queue-worker.ts <base url> <token>');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const headers = { authorization: `Bearer ${token}` };

interface Reply {
  status: number;
  body: string;
}

function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = http.request(
      new URL(path, base),
      {
        method,
        agent,
        // An explicit length, also for an empty POST, so the request goes out in one piece (no chunking).
        headers:
          payload === undefined
            ? { ...headers, 'content-length': 0 }
            : {
                ...headers,
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(payload),
              },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

let running = true;
let completed = 0;
let polls = 0;
let emptyPolls = 0;
let conflicts = 0;
let failures = 0;
const acceptMs: number[] = [];
const inFlight = new Set<Promise<void>>();

interface PendingTask {
  task_id: string;
  input: Record<string, unknown>;
}

async function handle(task: PendingTask, receivedAt: number): Promise<void> {
  const id = encodeURIComponent(task.task_id);
  const acceptStart = performance.now();
  const accepted = await call('POST', `/api/agent/tasks/${id}/accept`);
  const acceptCall = performance.now() - acceptStart;
  acceptMs.push(acceptCall);
  if (accepted.status === 409) {
    conflicts++;
    return;
  }
  if (accepted.status !== 200) {
    failures++;
    return;
  }
  // The accept round trip is the registry's time, not the worker's: it stays in the added latency.
  const workerMs = performance.now() - receivedAt - acceptCall;
  const result = call('POST', `/api/agent/tasks/${id}/result`, { output: { worker_ms: workerMs } }).then(
    (reply) => {
      if (reply.status === 200) completed++;
      else failures++;
    },
    () => {
      failures++;
    },
  );
  inFlight.add(result);
  void result.finally(() => inFlight.delete(result));
}

async function loop(): Promise<void> {
  while (running) {
    let reply: Reply;
    try {
      reply = await call('GET', '/api/agent/tasks?wait=30&limit=50');
    } catch {
      if (!running) break;
      failures++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    const receivedAt = performance.now();
    polls++;
    if (reply.status !== 200) {
      failures++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    const { tasks } = JSON.parse(reply.body) as { tasks: PendingTask[] };
    if (tasks.length === 0) emptyPolls++;
    // Claim everything we got before polling again, so the next poll does not list them again.
    await Promise.all(tasks.map((task) => handle(task, receivedAt)));
  }
}

process.on('message', (message: { type?: string }) => {
  if (message.type !== 'stop') return;
  running = false;
  void Promise.all(inFlight).then(() => {
    acceptMs.sort((a, b) => a - b);
    const at = (p: number) =>
      acceptMs[Math.min(acceptMs.length - 1, Math.floor((p / 100) * acceptMs.length))] ?? 0;
    process.send?.(
      {
        type: 'stats',
        completed,
        polls,
        emptyPolls,
        conflicts,
        failures,
        acceptP50: at(50),
        acceptP99: at(99),
      },
      () => process.exit(0),
    );
  });
});

void loop();
process.send?.({ type: 'ready' });
