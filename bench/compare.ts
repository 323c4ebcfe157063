/**
 * Two runs of `npm run bench` side by side (bench/out/<db>-<time>.json): for every scenario both ran,
 * requests per second, p50, p99 and server CPU per request, with the ratio after/before. Used to check
 * that a change moved no other figure by more than the run-to-run noise.
 *   npx tsx bench/compare.ts bench/out/sqlite-BEFORE.json bench/out/sqlite-AFTER.json
 */
import fs from 'node:fs';
import type { RawRun } from './raw-run.js';

const [beforeFile, afterFile] = process.argv.slice(2);
if (beforeFile === undefined || afterFile === undefined) {
  console.error('usage: npx tsx bench/compare.ts <before.json> <after.json>');
  process.exit(2);
}
const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as RawRun;
const before = read(beforeFile);
const after = read(afterFile);
const ratio = (now: number, then: number) => (then === 0 ? '-' : `${((now / then) * 100).toFixed(0)}%`);
const fixed = (value: number, digits: number) => value.toFixed(digits);

console.log(
  `before: ${beforeFile} (${before.options.db}, ${before.options.agents} agents); after: ${afterFile} (${after.options.db}, ${after.options.agents} agents)\n`,
);
console.log(
  '| Scenario | Conns | req/s before | req/s after | after/before | p99 ms before | p99 ms after | CPU ms/req before | CPU ms/req after | after/before |',
);
console.log('| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |');
for (const row of after.rows) {
  const old = before.rows.find((candidate) => candidate.name === row.name);
  if (old === undefined) continue;
  console.log(
    `| ${row.label} | ${row.connections} | ${fixed(old.load.rps, 0)} | ${fixed(row.load.rps, 0)} | ${ratio(row.load.rps, old.load.rps)} | ${fixed(old.load.p99, 2)} | ${fixed(row.load.p99, 2)} | ${fixed(old.cpuPerRequest, 3)} | ${fixed(row.cpuPerRequest, 3)} | ${ratio(row.cpuPerRequest, old.cpuPerRequest)} |`,
  );
}
