/**
 * `npm run bench -- --only sybil [--agents N]`: the Sybil simulation (packages/testkit/src/sybil-simulation.ts)
 * at bench size on SQLite, reputation v1 and v2 side by side. Prints the Markdown table for
 * bench/RESULTS.md and writes it to bench/out/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runSybilSimulation, sybilTable } from '@agent-registry/testkit/sybil-simulation';

export async function runSybilBench(
  outDir: string,
  log: (line: string) => void,
  agents = 100,
): Promise<void> {
  const started = Date.now();
  const report = await runSybilSimulation({
    honestAgents: agents,
    honestCallers: agents * 3,
    ringSizes: [10, 50, 200],
    agedRing: true,
    seed: 17,
    log,
  });
  const table = sybilTable(report);
  const file = path.join(outDir, `sybil-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(file, `${table}\n`);
  log(`\n${table}\n`);
  const worst = Math.max(...report.attacks.map((row) => Math.abs(row.v2.after - row.v2.before)));
  const topTen = report.attacks.some(
    (row) => row.victim === 'target' && row.v2.rankAfter <= report.topTenPercentRank,
  );
  log(`BUDGET sybil: largest v2 move ${worst.toFixed(2)} points (<= 5): ${worst <= 5 ? 'PASS' : 'FAIL'}`);
  log(`BUDGET sybil: no praised target in the top 10 % under v2: ${topTen ? 'FAIL' : 'PASS'}`);
  log(
    `BUDGET sybil: honest rank correlation v2 ${report.spearmanV2.toFixed(3)} (>= 0.9): ${report.spearmanV2 >= 0.9 ? 'PASS' : 'FAIL'}`,
  );
  log(
    `sybil: ${((Date.now() - started) / 1000).toFixed(1)} s; table in ${path.relative(process.cwd(), file)}`,
  );
}
