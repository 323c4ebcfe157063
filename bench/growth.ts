/**
 * How each search figure grows with the registry: reads the raw figures of `npm run bench` runs at
 * different `--agents` (bench/out/<db>-<time>.json) and prints, per search shape, p99 at 1 connection
 * and req/s at 10 connections for each size, with the ratio of each size to the one before.
 *   npx tsx bench/growth.ts bench/out/sqlite-A.json bench/out/sqlite-B.json bench/out/sqlite-C.json
 */
import fs from 'node:fs';
import type { RawRun } from './raw-run.js';

const runs = process.argv
  .slice(2)
  .map((file) => JSON.parse(fs.readFileSync(file, 'utf8')) as RawRun)
  .sort((a, b) => a.options.agents - b.options.agents);
if (runs.length === 0) {
  console.error('usage: npx tsx bench/growth.ts <run.json> [<run.json> ...]');
  process.exit(2);
}
const sizes = runs.map((run) => run.options.agents.toLocaleString('en-US'));
const names = [
  ...new Set(
    runs.flatMap((run) =>
      run.rows.filter((row) => row.name.startsWith('search-') && row.name.endsWith('-1')),
    ),
  ),
]
  .map((row) => row.name.slice(0, -2))
  .filter((name, index, all) => all.indexOf(name) === index);

const growth = (values: (number | undefined)[], digits: number) =>
  values
    .map((value, index) => {
      if (value === undefined) return '-';
      const previous = values[index - 1];
      const ratio = previous === undefined || index === 0 ? '' : ` (${(value / previous).toFixed(1)}x)`;
      return `${value.toFixed(digits)}${ratio}`;
    })
    .join(' | ');

console.log(
  `| Shape | p99 ms at 1 connection: ${sizes.join(' / ')} | req/s at 10 connections: ${sizes.join(' / ')} |`,
);
console.log(`| --- | ${sizes.map(() => '--:').join(' | ')} | ${sizes.map(() => '--:').join(' | ')} |`);
for (const name of names) {
  const p99 = runs.map((run) => run.rows.find((row) => row.name === `${name}-1`)?.load.p99);
  const rps = runs.map((run) => run.rows.find((row) => row.name === name)?.load.rps);
  console.log(`| ${name.replace(/^search-/, '')} | ${growth(p99, 1)} | ${growth(rps, 0)} |`);
}
console.log('');
console.log(`| Size | ${sizes.join(' | ')} |`);
console.log(`| --- | ${sizes.map(() => '--:').join(' | ')} |`);
console.log(
  `| Seed (agents and reviews), s | ${runs.map((run) => run.seedSeconds.toFixed(0)).join(' | ')} |`,
);
console.log(`| Server peak RSS, MB | ${runs.map((run) => (run.peakRssKb / 1024).toFixed(0)).join(' | ')} |`);
console.log(
  `| Database on disk, MB | ${runs.map((run) => ((run.databaseBytes ?? 0) / 1024 / 1024).toFixed(0)).join(' | ')} |`,
);
