import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli, tempHome } from './harness.js';

const BIN = path.join(import.meta.dirname, '../bin/agent-registry.js');

/** Runs bash with the completion script loaded, completing `words` (the last one being typed). */
function bashComplete(words: string[]): string[] {
  const script = [
    `source <("${process.execPath}" "${BIN}" completion bash)`,
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    '_agent_registry',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const result = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split('\n').filter(Boolean);
}

describe('agent-registry completion', () => {
  it('bash loads the script and registers it for agent-registry', () => {
    const loaded = spawnSync(
      'bash',
      ['-c', `source <("${process.execPath}" "${BIN}" completion bash) && complete -p agent-registry`],
      { encoding: 'utf8' },
    );
    assert.equal(loaded.status, 0, loaded.stderr);
    assert.match(loaded.stdout, /complete .*-F _agent_registry agent-registry/);
  });

  it('completes commands, subcommands and options', () => {
    assert.deepEqual(bashComplete(['agent-registry', 'reg']), ['register']);
    assert.deepEqual(bashComplete(['agent-registry', 'tasks', 'g']), ['get']);
    assert.deepEqual(bashComplete(['agent-registry', 'search', '--fed']), ['--federated']);
    assert.deepEqual(bashComplete(['agent-registry', 'tasks', 'list', '--wa']), ['--wait']);
    assert.ok(bashComplete(['agent-registry', 'show', '--']).includes('--registry'));
  });

  it('zsh and fish get scripts naming every command; another shell is a usage error', async () => {
    const home = tempHome();
    const zsh = await runCli(['completion', 'zsh'], { home });
    assert.equal(zsh.code, 0, zsh.stderr);
    assert.match(zsh.stdout, /^#compdef agent-registry/);
    assert.match(zsh.stdout, /compdef _agent_registry agent-registry/);
    const fish = await runCli(['completion', 'fish'], { home });
    assert.equal(fish.code, 0, fish.stderr);
    for (const command of ['register', 'worker', 'completion'])
      assert.match(fish.stdout, new RegExp(`-a ${command} `), command);
    const other = await runCli(['completion', 'tcsh'], { home });
    assert.equal(other.code, 2);
    assert.match(other.stderr, /unknown shell "tcsh"; use bash, zsh or fish/);
  });
});
