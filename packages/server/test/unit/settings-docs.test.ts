import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { GENERATED, REPOSITORY, withBlock } from '../../scripts/settings-docs.js';
import { knownSettingNames } from '../../src/kernel/config-typos.js';
import { SETTINGS, SETTING_SECTIONS, type SettingName } from '../../src/kernel/settings.js';

const read = (file: string): string => fs.readFileSync(path.join(REPOSITORY, file), 'utf8');

test('settings: the tables of README.md and docs/operations.md are the declarations (npm run docs:settings)', () => {
  for (const { file, block } of GENERATED) {
    const document = read(file);
    assert.equal(document, withBlock(document, block(), file), `${file} drifted: run npm run docs:settings`);
  }
});

test('settings: each one described in docs/operations.md is declared, under its section', () => {
  const operations = read('docs/operations.md');
  const detail = operations.slice(operations.indexOf('## Settings in detail'));
  let section: string | undefined;
  const described: string[] = [];
  for (const line of detail.split('\n')) {
    if (line.startsWith('## ') && !line.startsWith('## Settings in detail')) break;
    if (line.startsWith('### ')) section = line.slice(4);
    const heading = /^#### `([A-Z0-9_]+)`/.exec(line);
    if (heading === null) continue;
    const name = heading[1] as SettingName;
    described.push(name);
    assert.ok(name in SETTINGS, `${name} is described but not declared in kernel/settings.ts`);
    assert.equal(section, SETTING_SECTIONS[SETTINGS[name].section], `${name} is described under its section`);
  }
  assert.ok(described.length > 0);
});

test('settings: the typo detector knows exactly the declared ones', () => {
  assert.deepEqual(knownSettingNames(), Object.keys(SETTINGS).sort());
});
