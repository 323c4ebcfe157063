import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '@agent-registry/testkit';
import { repoRoot, startRegistry, type RunningRegistry } from './harness.js';

/** Runs `node examples/<file>` as a reader would, with the registry's address in AGENT_REGISTRY_URL. */
function runExample(file: string, registry: RunningRegistry, args: string[] = []) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'examples', file), ...args], {
    cwd: repoRoot,
    env: { ...process.env, AGENT_REGISTRY_URL: registry.url, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    output: () => ({ stdout, stderr }),
    exited,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('examples/ against a real registry', () => {
  let registry: RunningRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  for (const [agentFile, capability, expected] of [
    ['queue-agent.mjs', 'uppercase', 'HELLO FROM THE CALLER'],
    ['webhook-agent.mjs', 'reverse', 'rellac eht morf olleh'],
  ] as const) {
    it(`caller.mjs finds, invokes and reviews ${agentFile}`, async () => {
      const agent = runExample(agentFile, registry);
      try {
        await eventually(() => agent.output().stdout.includes('ready did:'), `${agentFile} to start`);
        const did = /ready (\S+)/.exec(agent.output().stdout)?.[1];
        const caller = runExample('caller.mjs', registry, [capability]);
        const code = await caller.exited;
        assert.equal(code, 0, caller.output().stderr);
        const [invoked, reviewed] = lines(caller.output().stdout);
        assert.deepEqual(invoked, { agent: did, output: { text: expected } });
        assert.equal(reviewed?.verified, true);
      } finally {
        const code = await agent.stop();
        assert.equal(code, 0, agent.output().stderr);
      }
    });
  }
});
