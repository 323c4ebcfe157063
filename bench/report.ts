import fs from 'node:fs';
import type { Options } from './options.js';
import type { Row } from './measure.js';
import type { machine } from './proc.js';
import type { seedRegistry } from './seed.js';
import { searchBudgets } from './scenarios/search.js';

/** The run's table, its notes and one BUDGET line per budget. */

export interface ReportContext {
  options: Options;
  box: ReturnType<typeof machine>;
  seeded: Awaited<ReturnType<typeof seedRegistry>>;
  seedSeconds: number;
  /** Seeded by this run, or copied from a seed kept by an earlier one (--keep-database). */
  seedSource: 'seeded' | 'copied';
  /** Seconds from the end of the seed (or the start of the copy) to a database ready to measure. */
  settleSeconds: number;
  peakRssKb: number;
  rssEndKb: number;
  /** Of rssEndKb: the process's own memory, and mapped files (code, the SQLite file's memory map). */
  rssEndAnonKb: number;
  rssEndFileKb: number;
  rssAtStart: number;
  elapsed: number;
  databaseBytes: number;
}

export function renderReport(rows: Row[], context: ReportContext): string {
  const { options, box, seeded } = context;
  const find = (name: string) => rows.find((row) => row.name === name);
  const baseline = find('baseline-get');
  const lines: string[] = [];
  lines.push('');
  lines.push(
    `## ${options.db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${options.agents.toLocaleString('en-US')} agents`,
  );
  lines.push('');
  lines.push(
    `Machine: ${box.cpu}, ${box.cores} cores, ${box.memoryGiB} GiB, Node ${box.node}, Linux ${box.kernel}.`,
  );
  if (options.registryNodeFlags.length > 0)
    lines.push(`Registry started with Node.js flags: ${options.registryNodeFlags.join(' ')}.`);
  lines.push(
    `Seed: ${options.agents.toLocaleString('en-US')} agents in ${seeded.agentsSeconds.toFixed(1)} s, ` +
      `${seeded.reviews.toLocaleString('en-US')} reviews (${seeded.verifiedReviews.toLocaleString('en-US')} verified) of ` +
      `${seeded.reviewedAgents.toLocaleString('en-US')} agents in ${seeded.reviewsSeconds.toFixed(1)} s. ` +
      `Runs: ${options.warmup} s warm-up, then ${options.duration} s (registrations: a fixed number of pre-signed bodies).`,
  );
  lines.push(
    context.seedSource === 'copied'
      ? `Database: a copy of a seed kept by an earlier run (--keep-database), made in ${context.settleSeconds.toFixed(1)} s.`
      : options.db === 'postgres'
        ? `Database: seeded by this run, then VACUUM ANALYZE and CHECKPOINT before any measurement (${context.settleSeconds.toFixed(1)} s).`
        : 'Database: seeded by this run.',
  );
  lines.push('');
  const dbColumn = options.db === 'postgres';
  lines.push(
    `| Scenario | Conns | req/s | p50 ms | p99 ms | Server CPU ms/req | Server CPU % |${dbColumn ? ' PostgreSQL CPU ms/req |' : ''} Non-2xx | vs baseline |`,
  );
  lines.push(`| --- | --: | --: | --: | --: | --: | --: |${dbColumn ? ' --: |' : ''} --: | --: |`);
  for (const row of rows) {
    const ratio =
      (row.name === 'get' || row.name === 'floor-get') && baseline !== undefined
        ? `${((row.load.rps / baseline.load.rps) * 100).toFixed(0)}% req/s, ${(row.cpuPerRequest / baseline.cpuPerRequest).toFixed(1)}x CPU`
        : '';
    lines.push(
      `| ${row.label} | ${row.connections} | ${row.load.rps.toFixed(0)} | ${row.load.p50.toFixed(2)} | ${row.load.p99.toFixed(2)} | ` +
        `${row.cpuPerRequest.toFixed(3)} | ${row.cpuPercent.toFixed(0)} |${dbColumn ? ` ${row.dbCpuPerRequest?.toFixed(3) ?? ''} |` : ''} ` +
        `${row.load.non2xx + row.load.errors} | ${ratio} |`,
    );
  }
  const queueRows = rows.filter((row) => row.extra?.addedP50 !== undefined);
  if (queueRows.length > 0) {
    lines.push('');
    lines.push(
      "Queue invocation added latency = invoke round trip (autocannon) minus the worker's own time (poll answer in hand -> result sent, less its accept call, which is the registry's time):",
    );
    for (const row of queueRows) {
      lines.push(
        `- ${row.label}: p50 ${row.extra?.addedP50?.toFixed(2)} ms, p99 ${row.extra?.addedP99?.toFixed(2)} ms ` +
          `(round trip p50 ${row.load.p50.toFixed(2)} ms, p99 ${row.load.p99.toFixed(2)} ms; worker's accept call p50 ${row.extra?.acceptP50?.toFixed(2)} ms)`,
      );
    }
  }
  const faceRow = rows.find((row) => row.name === 'faces-1');
  if (faceRow?.extra?.restP50 !== undefined) {
    const e = faceRow.extra;
    lines.push('');
    lines.push(
      'Invocation through each face (the same webhook agent; calls taking turns on one connection):',
    );
    for (const [face, label] of [
      ['rest', 'POST /api/invoke'],
      ['mcp', 'MCP tools/call invoke_agent'],
      ['mcp2026', 'MCP tools/call invoke_agent, revision 2026-07-28'],
      ['a2a', 'A2A SendMessage'],
    ] as const) {
      lines.push(
        `- ${label}: p50 ${e[`${face}P50`]?.toFixed(2)} ms, p99 ${e[`${face}P99`]?.toFixed(2)} ms (${e[`${face}Count`]} calls)`,
      );
    }
  }
  lines.push('');
  lines.push(
    `Server memory: peak RSS (VmHWM) ${(context.peakRssKb / 1024).toFixed(0)} MB; RSS after start ${(context.rssAtStart / 1024).toFixed(0)} MB, at the end ${(context.rssEndKb / 1024).toFixed(0)} MB ` +
      `(anonymous ${(context.rssEndAnonKb / 1024).toFixed(0)} MB, mapped files ${(context.rssEndFileKb / 1024).toFixed(0)} MB: ` +
      `the code, and on SQLite the database pages read through its memory map, which are the kernel's page cache).`,
  );
  lines.push(`Database on disk at the end: ${(context.databaseBytes / 1024 / 1024).toFixed(0)} MB.`);
  lines.push(`Whole run: ${(context.elapsed / 60).toFixed(1)} min.`);
  lines.push('');
  lines.push(...budgets(rows, context));
  return lines.join('\n');
}

export function budgets(rows: Row[], context: ReportContext): string[] {
  const find = (name: string) => rows.find((row) => row.name === name);
  const out: string[] = [];
  // The budgets are set for the default SQLite deployment; PostgreSQL figures are marked as such.
  const suffix = context.options.db === 'postgres' ? ' (postgres)' : '';
  const line = (name: string, measured: string, target: string, pass: boolean) =>
    out.push(`BUDGET ${name}${suffix}: ${measured} (target ${target}) ${pass ? 'PASS' : 'FALLS SHORT'}`);
  const get = find('get');
  const baseline = find('baseline-get');
  if (get !== undefined && baseline !== undefined) {
    const ratio = (get.load.rps / baseline.load.rps) * 100;
    line(
      'get-profile-vs-baseline',
      `${ratio.toFixed(1)}% of baseline req/s (${get.load.rps.toFixed(0)} vs ${baseline.load.rps.toFixed(0)})`,
      '>= 80%',
      ratio >= 80,
    );
  }
  const floor = find('floor-get');
  if (get !== undefined && floor !== undefined) {
    // The registry against the least bare Fastify does for the same read, measured beside it.
    const ratio = (get.load.rps / floor.load.rps) * 100;
    line(
      'get-profile-vs-floor',
      `${ratio.toFixed(1)}% of the bare-Fastify floor's req/s (${get.load.rps.toFixed(0)} vs ${floor.load.rps.toFixed(0)}; server CPU ${(get.cpuPerRequest * 1000).toFixed(0)} vs ${(floor.cpuPerRequest * 1000).toFixed(0)} µs per request)`,
      '>= 90%',
      ratio >= 90,
    );
  }
  const auth = find('auth-get');
  if (auth !== undefined && get !== undefined) {
    const ratio = (auth.load.rps / get.load.rps) * 100;
    line(
      'authenticated-get-vs-get',
      `${ratio.toFixed(1)}% of GET profile req/s (${auth.load.rps.toFixed(0)} vs ${get.load.rps.toFixed(0)})`,
      '>= 70%',
      ratio >= 70,
    );
  }
  out.push(...searchBudgets(rows, context.options.db));
  // "A few milliseconds of server time" per page: judged on one connection, so no queueing is counted.
  for (const name of ['page-home', 'page-search', 'page-agent', 'page-stats']) {
    const single = find(`${name}-1`);
    if (single !== undefined)
      line(
        `${name}-p50`,
        `${single.load.p50.toFixed(2)} ms p50, ${single.load.p99.toFixed(2)} ms p99, ${single.cpuPerRequest.toFixed(2)} ms server CPU at 1 connection`,
        'p50 <= 5 ms',
        single.load.p50 <= 5,
      );
  }
  const register = find('register-ed25519');
  if (register !== undefined)
    line('register-ed25519', `${register.load.rps.toFixed(0)}/s`, '>= 2500/s', register.load.rps >= 2500);
  const queue = find('queue-1');
  if (queue?.extra?.addedP50 !== undefined) {
    line(
      'queue-added-latency-p50',
      `${queue.extra.addedP50.toFixed(2)} ms (1 invoker connection)`,
      '<= 1.5 ms',
      queue.extra.addedP50 <= 1.5,
    );
  }
  const faces = find('faces-1')?.extra;
  if (faces?.restP50 !== undefined) {
    for (const [face, label] of [
      ['mcp', 'mcp-invoke-overhead-p50'],
      ['mcp2026', 'mcp-2026-invoke-overhead-p50'],
      ['a2a', 'a2a-send-overhead-p50'],
    ] as const) {
      const p50 = faces[`${face}P50`] as number;
      const overhead = p50 - faces.restP50;
      line(
        label,
        `${overhead.toFixed(2)} ms over POST /api/invoke (p50 ${p50.toFixed(2)} vs ${faces.restP50.toFixed(2)} ms, ` +
          `${faces[`${face}Count`]} and ${faces.restCount} calls taking turns on one connection)`,
        '<= 1 ms',
        overhead <= 1,
      );
    }
  }
  const rssMb = context.peakRssKb / 1024;
  line(
    'server-peak-rss',
    `${rssMb.toFixed(0)} MB at ${context.options.agents.toLocaleString('en-US')} agents`,
    '<= 200 MB',
    rssMb <= 200,
  );
  return out;
}

/** Writes `<stem>.json` (every figure but the raw latencies) and `<stem>.txt` (the report); returns the JSON's path. */
export function writeRawFigures(
  stem: string,
  rows: Row[],
  report: string,
  run: Pick<
    ReportContext,
    'options' | 'box' | 'seedSeconds' | 'seedSource' | 'settleSeconds' | 'peakRssKb' | 'databaseBytes'
  >,
): string {
  const jsonFile = `${stem}.json`;
  fs.writeFileSync(
    jsonFile,
    JSON.stringify(
      {
        ...run,
        options: { ...run.options, only: run.options.only && [...run.options.only] },
        rows: rows.map((row) => ({ ...row, load: { ...row.load, latencies: undefined } })),
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(`${stem}.txt`, report);
  return jsonFile;
}
