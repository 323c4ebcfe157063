import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { SEARCH_LIMITS } from '@agent-registry/protocol';
import { parseJson, runCli, tempHome } from './harness.js';

/** Every command and subcommand of the contract; each must have --help with an example. */
const COMMANDS = [
  ['init'],
  ['validate'],
  ['register'],
  ['login'],
  ['whoami'],
  ['token'],
  ['show'],
  ['update'],
  ['deactivate'],
  ['search'],
  ['invoke'],
  ['tasks'],
  ['tasks', 'list'],
  ['tasks', 'get'],
  ['worker'],
  ['review'],
  ['reviews'],
  ['reputation'],
  ['keys'],
  ['keys', 'show'],
  ['keys', 'generate'],
  ['keys', 'import'],
  ['config'],
  ['config', 'list'],
  ['config', 'get'],
  ['config', 'set'],
  ['config', 'unset'],
  ['config', 'path'],
];

describe('help', () => {
  const home = tempHome();
  after(() => fs.rmSync(home, { recursive: true, force: true }));

  it('the top-level help lists every command, the exit codes and examples', async () => {
    const result = await runCli(['--help'], { home });
    assert.equal(result.code, 0);
    for (const [name] of COMMANDS) assert.match(result.stdout, new RegExp(`^ {2}${name}\\b`, 'm'), name);
    assert.match(result.stdout, /Exit codes: 0 ok; 1 refused or failed/);
    assert.match(result.stdout, /Examples:\n {2}\$ agent-registry init/);
    const version = await runCli(['--version'], { home });
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  for (const command of COMMANDS) {
    it(`${command.join(' ')} --help shows usage, the global options and an example`, async () => {
      const result = await runCli([...command, '--help'], { home });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^Usage: agent-registry ${command.join(' ')}`));
      assert.match(result.stdout, /--registry <url>/);
      assert.match(result.stdout, /--json/);
      assert.match(result.stdout, /Examples:\n {2}\$ agent-registry /);
    });
  }

  it("search --help offers every sort of the protocol and names the registry's default", async () => {
    const result = await runCli(['search', '--help'], { home });
    assert.equal(result.code, 0, result.stderr);
    // Commander wraps long lines: compare with the whitespace collapsed.
    const help = result.stdout.replace(/\s+/g, ' ');
    const sortHelp = /--sort <field> (.*?) --order/.exec(help)?.[1];
    assert.ok(sortHelp !== undefined, help);
    const choices = SEARCH_LIMITS.sorts.map((sort) => `"${sort}"`).join(', ');
    assert.ok(sortHelp.includes(`(choices: ${choices})`), sortHelp);
    assert.ok(
      sortHelp.includes(
        `(default: ${SEARCH_LIMITS.sortDefaultWithQuery} with words, else ${SEARCH_LIMITS.sortDefault})`,
      ),
      sortHelp,
    );
    assert.ok(help.includes(`--order <direction> direction (default: ${SEARCH_LIMITS.orderDefault})`), help);
    for (const sort of SEARCH_LIMITS.sorts) {
      const parsed = await runCli(['search', '--sort', sort, '--registry', 'http://127.0.0.1:9', '--json'], {
        home,
      });
      assert.equal(parsed.code, 3, `--sort ${sort} is accepted (then the registry is unreachable)`);
    }
  });

  it('usage errors exit 2, as text or as JSON with --json', async () => {
    const unknown = await runCli(['frobnicate'], { home });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
    const missing = await runCli(['show'], { home });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing required argument 'did'/);
    const badOption = await runCli(['search', '--colour', 'red', '--json'], { home });
    assert.equal(badOption.code, 2);
    assert.deepEqual(parseJson(badOption), {
      error: { code: 'USAGE', message: "unknown option '--colour'" },
    });
    assert.equal(badOption.stderr, '');
  });
});
