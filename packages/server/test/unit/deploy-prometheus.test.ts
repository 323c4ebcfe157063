import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { testDatabase } from '@agent-registry/testkit';
import { createRegistryMetrics } from '../../src/telemetry/prometheus.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const RULES_DIR = path.join(ROOT, 'deploy', 'prometheus');
const RULES = path.join(RULES_DIR, 'alerts.yml');
const RUNBOOKS = fs.readFileSync(path.join(ROOT, 'docs', 'runbooks.md'), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  labels?: { severity?: string };
  annotations?: { runbook?: string };
}

const rules = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
/** Every query of the Grafana dashboard. */
const dashboardQueries = (): string[] =>
  (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy', 'grafana', 'agent-registry.json'), 'utf8')) as {
      panels: { targets?: { expr: string }[] }[];
    }
  ).panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));

const promtool = spawnSync('promtool', ['--version']).status === 0;
// Once per run: the rules do not depend on the database.
const skip = testDatabase === 'postgres' ? 'runs in the SQLite pass' : false;

test('every alert has a severity and a runbook section of its own in docs/runbooks.md', { skip }, () => {
  assert.ok(rules.length > 0);
  const sections = [...RUNBOOKS.matchAll(/^## (\S+)$/gm)].map((match) => match[1]);
  assert.deepEqual(
    sections,
    rules.map((rule) => rule.alert),
    'one section per alert, in the order of alerts.yml',
  );
  for (const rule of rules) {
    assert.ok(['page', 'ticket'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity`);
    assert.equal(rule.annotations?.runbook, `docs/runbooks.md#${rule.alert.toLowerCase()}`);
    const section = RUNBOOKS.split(`## ${rule.alert}\n`)[1]?.split('\n## ')[0] ?? '';
    for (const part of ['**Means:**', '**Confirm:**', '**Do:**'])
      assert.ok(section.includes(part), `${rule.alert}: ${part}`);
    assert.ok(
      section.includes(`**Severity:** ${rule.labels?.severity}.`),
      `${rule.alert}: severity in the runbook`,
    );
  }
});

test(
  'every metric an alert or the dashboard reads is served (the defaults) or in the metrics table of docs/operations.md',
  { skip },
  async () => {
    const documented = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
    const served = await createRegistryMetrics({ version: 'test' }).render();
    const queries = [...rules, ...dashboardQueries().map((expr) => ({ alert: 'dashboard', expr }))];
    for (const rule of queries)
      for (const [name] of rule.expr.matchAll(/\b(?:registry|http|nodejs|process)_[a-z_0-9]+/g)) {
        const base = name.replace(/_(bucket|sum|count)$/, '');
        // The table writes families as `registry_x_y`, `_z_total`: the first part names them.
        const stem = base.replace(/^(registry_[a-z]+_[a-z]+)_.*$/, '$1');
        const known = /^(nodejs|process)_/.test(base)
          ? served.includes(`# TYPE ${base} `)
          : documented.includes(`\`${base}\``) || documented.includes(`\`${stem}`);
        assert.ok(known, `${rule.alert}: ${name}`);
      }
  },
);

test(
  'promtool check rules and promtool test rules pass',
  // CI installs promtool (.ci/run): there a missing promtool fails instead of skipping.
  {
    skip:
      skip ||
      (!promtool &&
        process.env.CI !== 'true' &&
        'promtool is not installed (Debian: apt-get install prometheus)'),
  },
  () => {
    execFileSync('promtool', ['check', 'rules', RULES], { stdio: 'pipe' });
    execFileSync('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: RULES_DIR, stdio: 'pipe' });
    // The dashboard's queries parse too: checked as recording rules.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-dashboard-'));
    try {
      const file = path.join(dir, 'dashboard.yml');
      const records = dashboardQueries().map((expr, index) => ({ record: `dashboard:panel_${index}`, expr }));
      fs.writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: records }] }));
      execFileSync('promtool', ['check', 'rules', file], { stdio: 'pipe' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
