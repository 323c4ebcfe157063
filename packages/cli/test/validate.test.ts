import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseJson, runCli, tempHome } from './harness.js';

interface ValidateOutput {
  file: string;
  valid: boolean;
  problems: { path: string; code: string; message: string }[];
  warnings: { path: string; code: string; message: string }[];
}

describe('validate', () => {
  const home = tempHome();
  after(() => fs.rmSync(home, { recursive: true, force: true }));
  const write = (name: string, value: unknown): string => {
    const file = path.join(home, name);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };

  it('accepts a good profile (exit 0) and reads profile.json of the config directory by default', async () => {
    write('profile.json', {
      name: 'Echo',
      capabilities: [{ type: 'echo', input_schema: { type: 'object' } }],
    });
    const result = await runCli(['validate'], { home });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /is a valid profile/);
    const json = parseJson<ValidateOutput>(await runCli(['validate', '--json'], { home }));
    assert.deepEqual(json, {
      file: path.join(home, 'profile.json'),
      valid: true,
      problems: [],
      warnings: [],
    });
  });

  it('reports every problem with its JSON path (exit 1)', async () => {
    const file = write('bad.json', {
      name: '',
      description: 'x'.repeat(1001),
      capabilities: [
        { type: 'ok', tags: ['t'.repeat(51)] },
        { description: 'no type' },
        { type: 'bad-schema', input_schema: { type: 'not-a-type' } },
        { type: 'risky', output_schema: { type: 'string', pattern: '^(?=a)a+$' } },
      ],
      tags: Array.from({ length: 21 }, (_, index) => `tag${index}`),
      avatar: 'ftp://example.com/a.png',
      website: 'not a url',
      capabilites: [],
    });
    const result = await runCli(['validate', file, '--json'], { home });
    assert.equal(result.code, 1);
    const json = parseJson<ValidateOutput>(result);
    assert.equal(json.valid, false);
    assert.deepEqual(
      json.problems.map((problem) => [problem.path, problem.code]),
      [
        ['$.name', 'TOO_SHORT'],
        ['$.description', 'TOO_LONG'],
        ['$.capabilities[0].tags[0]', 'TOO_LONG'],
        ['$.capabilities[1].type', 'REQUIRED'],
        ['$.tags', 'TOO_MANY'],
        ['$.avatar', 'INVALID_URL'],
        ['$.website', 'INVALID_URL'],
        ['$.capabilities[2].input_schema', 'INVALID_SCHEMA'],
        ['$.capabilities[3].output_schema', 'INVALID_SCHEMA'],
      ],
    );
    assert.deepEqual(
      json.warnings.map((warning) => warning.path),
      ['$.capabilites'],
    );

    const human = await runCli(['validate', file], { home });
    assert.equal(human.code, 1);
    assert.equal(human.stdout, '');
    assert.match(human.stderr, /has 9 problems/);
    assert.match(human.stderr, /\$\.capabilities\[1\]\.type: a capability needs a type/);
    assert.match(human.stderr, /warning: .*\$\.capabilites: unknown member "capabilites"/);
  });

  it('reports missing name and capabilities, and a non-object', async () => {
    const missing = parseJson<ValidateOutput>(
      await runCli(['validate', write('empty.json', {}), '--json'], { home }),
    );
    assert.deepEqual(
      missing.problems.map((problem) => problem.path),
      ['$.name', '$.capabilities'],
    );
    const list = parseJson<ValidateOutput>(
      await runCli(['validate', write('list.json', []), '--json'], { home }),
    );
    assert.deepEqual(
      list.problems.map((problem) => [problem.path, problem.code]),
      [['$', 'NOT_AN_OBJECT']],
    );
  });

  it('--update checks a partial profile: nothing is required, but what is present must be right', async () => {
    const patch = write('patch.json', { description: 'New words' });
    assert.equal((await runCli(['validate', patch, '--update'], { home })).code, 0);
    assert.equal((await runCli(['validate', patch], { home })).code, 1);
    const badPatch = write('bad-patch.json', { capabilities: [] });
    const result = parseJson<ValidateOutput>(
      await runCli(['validate', badPatch, '--update', '--json'], { home }),
    );
    assert.deepEqual(
      result.problems.map((problem) => [problem.path, problem.code]),
      [['$.capabilities', 'TOO_FEW']],
    );
  });

  it('a file that is not JSON is a problem at $ (exit 1); a missing file is a usage error (exit 2)', async () => {
    const broken = await runCli(['validate', write('broken.json', '{"name": '), '--json'], { home });
    assert.equal(broken.code, 1);
    const json = parseJson<ValidateOutput>(broken);
    assert.deepEqual(
      json.problems.map((problem) => [problem.path, problem.code]),
      [['$', 'INVALID_JSON']],
    );

    const missing = await runCli(['validate', path.join(home, 'nope.json')], { home });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /profile file not found .*agent-registry init/);
    const missingJson = await runCli(['validate', path.join(home, 'nope.json'), '--json'], { home });
    assert.equal(missingJson.code, 2);
    assert.equal(parseJson<{ error: { code: string } }>(missingJson).error.code, 'FILE_NOT_FOUND');
  });
});
