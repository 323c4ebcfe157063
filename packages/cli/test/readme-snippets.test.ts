import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '@agent-registry/testkit';
import { repoRoot, startRegistry, type RunningRegistry } from './harness.js';

/** The first TypeScript block of a Markdown file: the snippet a reader copies first. */
function firstTypeScriptBlock(file: string): string {
  const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
  const block = /```ts\n([\s\S]*?)\n```/.exec(text)?.[1];
  assert.ok(block !== undefined, `${file} has a \`\`\`ts block`);
  return block;
}

/**
 * Runs a snippet exactly as written, as a reader would paste it into `agent.mts` in a project of their
 * own (the project's packages reached through node_modules), until it prints `ready <did>`; then stops it.
 */
async function runSnippet(source: string, directory: string, registry: RunningRegistry): Promise<string> {
  const file = path.join(directory, 'agent.mts');
  fs.writeFileSync(file, source);
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: directory,
    env: { ...process.env, AGENT_REGISTRY_URL: registry.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await eventually(
      () => {
        assert.equal(child.exitCode, null, `the snippet exited: ${stderr}`);
        return /ready did:\S+/.test(stdout);
      },
      'the snippet to print ready <did>',
      60_000,
    );
    return /ready (did:\S+)/.exec(stdout)?.[1] ?? '';
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('README snippets that create a key, run as written', () => {
  let registry: RunningRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  for (const [file, name] of [
    ['README.md', 'Shouter'],
    ['packages/sdk/README.md', 'Translator'],
  ] as const) {
    it(`${file}: the first run saves the key, the second is the same agent`, async () => {
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-snippet-'));
      try {
        fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(directory, 'node_modules'));
        const source = firstTypeScriptBlock(file);
        const first = await runSnippet(source, directory, registry);
        const keyFiles = fs.readdirSync(directory).filter((entry) => entry.endsWith('-key.json'));
        assert.equal(keyFiles.length, 1, 'one key file saved');
        const saved = path.join(directory, keyFiles[0] ?? '');
        assert.equal(fs.statSync(saved).mode & 0o777, 0o600);
        assert.equal((JSON.parse(fs.readFileSync(saved, 'utf8')) as { did: string }).did, first);

        const second = await runSnippet(source, directory, registry);
        assert.equal(second, first, 'the second run is the same agent');
        const search = (await (
          await fetch(`${registry.url}/api/agents/search?q=${name}&limit=100`)
        ).json()) as { agents: { did: string; name: string }[] };
        assert.deepEqual(
          search.agents.filter((agent) => agent.name === name).map((agent) => agent.did),
          [first],
          'one agent registered, however often the snippet runs',
        );
      } finally {
        fs.rmSync(directory, { recursive: true, force: true });
      }
    });
  }
});
