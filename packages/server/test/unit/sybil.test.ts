import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testDatabase } from '@agent-registry/testkit';
import { runSybilSimulation, spearman } from '@agent-registry/testkit/sybil-simulation';

// The simulation copies SQLite files between attacks; the formula and its SQL run on PostgreSQL in
// reputation.test.ts. bench/RESULTS.md has the larger run (npm run bench -- --only sybil).
describe('Sybil resistance (test-size simulation)', { skip: testDatabase === 'postgres' }, () => {
  test('spearman is 1 for the same order, -1 for the reverse, ties averaged', () => {
    assert.equal(spearman([1, 2, 3], [10, 20, 30]), 1);
    assert.equal(spearman([1, 2, 3], [30, 20, 10]), -1);
    assert.ok(Math.abs(spearman([1, 2, 3, 4], [1, 1, 2, 3]) - 0.9487) < 0.001);
  });

  test('rings of 10, 50 and 200 move no victim by more than 5 points or into the top 10 %; honest order holds', async () => {
    const report = await runSybilSimulation({
      honestAgents: 20,
      honestCallers: 60,
      ringSizes: [10, 50, 200],
      agedRing: true,
      seed: 5,
    });
    assert.ok(report.spearmanV2 >= 0.9, `rank correlation v2 ${report.spearmanV2}`);
    assert.equal(report.attacks.length, 12);
    for (const row of report.attacks) {
      const label = `${row.attack} by ${row.ring}`;
      assert.ok(
        Math.abs(row.v2.after - row.v2.before) <= 5,
        `${label}: v2 moved ${row.v2.before} -> ${row.v2.after}`,
      );
      if (row.victim === 'target') {
        assert.ok(row.v2.rankAfter > report.topTenPercentRank, `${label}: v2 rank ${row.v2.rankAfter}`);
      }
    }
    // The same attacks do move v1, so the simulation can tell the two apart.
    const v1Praise = report.attacks.find((row) => row.attack === 'praise' && row.ring === 200);
    assert.ok(v1Praise !== undefined && v1Praise.v1.after - v1Praise.v1.before > 20);
    const v1Smear = report.attacks.find((row) => row.attack === 'smear' && row.ring === 50);
    assert.ok(v1Smear !== undefined && v1Smear.v1.before - v1Smear.v1.after > 20);
  });
});
