#!/usr/bin/env node
/**
 * The interface's endpoint table, kept in the repository as packages/server/test/fixtures/interface-endpoints.json
 * so that the OpenAPI test runs on every clone (the interface document itself is not shipped).
 *
 *   node scripts/interface-endpoints.mjs <interface.md>          exits 1 and prints the difference when the snapshot is stale
 *   node scripts/interface-endpoints.mjs <interface.md> --write  rewrites the snapshot
 *
 * .ci/run checks it against ../shared/spec/agent-registry-interface.md, which CI always has beside the clone.
 */
import fs from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const SNAPSHOT = fileURLToPath(
  new URL('../packages/server/test/fixtures/interface-endpoints.json', import.meta.url),
);
const [specFile, flag] = process.argv.slice(2);
if (specFile === undefined || (flag !== undefined && flag !== '--write')) {
  process.stderr.write('usage: node scripts/interface-endpoints.mjs <interface.md> [--write]\n');
  process.exit(2);
}

/** Every `| METHOD | /path |` row, with the number of the section it is under. */
const rows = [];
let section = '';
for (const line of fs.readFileSync(specFile, 'utf8').split('\n')) {
  const heading = /^#{2,3}\s+(\d+(?:\.\d+)?)\s/.exec(line);
  if (heading) section = heading[1];
  const row = /^\|\s*(GET|POST|PUT|DELETE|PATCH)\s*\|\s*(\/\S*)\s*\|/.exec(line);
  if (row) rows.push({ method: row[1].toLowerCase(), path: row[2], section });
}
// Guard against a parser that silently finds nothing.
if (rows.length < 20) {
  process.stderr.write(`only ${rows.length} endpoint rows parsed from ${specFile}\n`);
  process.exit(1);
}
const text = `${JSON.stringify(rows, null, 2)}\n`;
if (flag === '--write') {
  fs.writeFileSync(SNAPSHOT, text);
  process.stdout.write(`wrote ${rows.length} endpoint rows to ${SNAPSHOT}\n`);
} else if (!fs.existsSync(SNAPSHOT) || fs.readFileSync(SNAPSHOT, 'utf8') !== text) {
  process.stderr.write(
    `${SNAPSHOT} is not the endpoint table of ${specFile}; rewrite it with --write and review the difference\n`,
  );
  process.exit(1);
} else {
  process.stdout.write(`interface endpoint snapshot is current (${rows.length} rows)\n`);
}
