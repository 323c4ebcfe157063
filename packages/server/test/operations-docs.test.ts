import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { profileOf } from './discovery-helpers.js';
import {
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  testDatabase,
  type TestDatabase,
} from './helpers.js';
import { call, startNode, type NodeProcess } from './node-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const operations = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');

/**
 * The ```sh blocks under a `## section` and its `### subsection` of a Markdown text, as written: the
 * test runs what an operator copies.
 */
function shellBlocks(markdown: string, section: string, subsection: string): string[] {
  const lines = markdown.split('\n');
  const blocks: string[] = [];
  let inSection = false;
  let inSubsection = false;
  let block: string[] | undefined;
  for (const line of lines) {
    if (block !== undefined) {
      if (line === '```') {
        blocks.push(block.join('\n'));
        block = undefined;
      } else block.push(line);
      continue;
    }
    if (line.startsWith('## ')) {
      inSection = line === `## ${section}`;
      inSubsection = false;
    } else if (line.startsWith('### ')) inSubsection = inSection && line === `### ${subsection}`;
    else if (inSubsection && line === '```sh') block = [];
  }
  assert.ok(blocks.length > 0, `docs/operations.md has a sh block under "${section}" / "${subsection}"`);
  return blocks;
}

/**
 * A directory that looks like a checkout to npm (its package.json and code are the repository's, by
 * symbolic link) with data and backups of its own, so the docs' relative paths land in it.
 */
function checkoutLike(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-docs-'));
  for (const entry of [
    'package.json',
    'package-lock.json',
    'tsconfig.base.json',
    'node_modules',
    'packages',
    'scripts',
  ])
    fs.symlinkSync(path.join(root, entry), path.join(dir, entry));
  return dir;
}

/** Runs one block with bash as an operator's shell would, stopping at its first failing command. */
async function runBlock(block: string, cwd: string, databaseUrl: string | undefined): Promise<void> {
  // npm's own variables from the test's runner would point npm at the repository's configuration.
  const env: Record<string, string | undefined> = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')),
  );
  // Unset on SQLite: the registry's default, ./data/registry.db, is the docs' file.
  if (databaseUrl === undefined) delete env.DATABASE_URL;
  else env.DATABASE_URL = databaseUrl;
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', block], { cwd, env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  assert.equal(code, 0, `${block}\n---\n${output}`);
}

async function register(node: NodeProcess, name: string): Promise<void> {
  const body = await registrationBody(ed25519Agent(), profileOf(name), Date.now());
  const response = await call(node, 'POST', '/api/agents/register', undefined, body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

async function found(node: NodeProcess, word: string): Promise<number> {
  const response = await call(node, 'GET', `/api/agents/search?q=${word}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.total as number;
}

const dialect = testDatabase === 'sqlite' ? 'SQLite' : 'PostgreSQL';

describe(`docs/operations.md, Backups and Restore (${dialect}), word for word`, () => {
  let dir: string;
  let testDb: TestDatabase | undefined;
  let databaseUrl: string | undefined;
  let node: NodeProcess | undefined;

  before(async () => {
    dir = checkoutLike();
    if (testDatabase === 'postgres') {
      testDb = await createTestDatabase();
      databaseUrl = testDb.url;
    }
  });

  after(async () => {
    await node?.stop();
    await testDb?.drop();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test(
    'back up a running registry, write more, stop it, restore, start it: the registry is as backed up',
    {
      // The first `npm run backup` of a checkout builds the server, as `npm start` does.
      timeout: 15 * 60_000,
    },
    async () => {
      // The registry's own default on SQLite: ./data/registry.db under the checkout.
      const nodeUrl = databaseUrl ?? `sqlite:${path.join(dir, 'data', 'registry.db')}`;
      node = await startNode(nodeUrl);
      for (let index = 0; index < 3; index += 1) await register(node, `Backedup ${index}`);

      for (const block of shellBlocks(operations, 'Backups', dialect))
        await runBlock(block, dir, databaseUrl);
      const backups = fs.readdirSync(path.join(dir, 'backup'));
      assert.equal(backups.length, 1, backups.join(', '));

      for (let index = 0; index < 2; index += 1) await register(node, `Lost ${index}`);
      assert.equal(await found(node, 'lost'), 2);
      await node.stop();
      node = undefined;

      for (const block of shellBlocks(operations, 'Restore', dialect))
        await runBlock(block, dir, databaseUrl);

      node = await startNode(nodeUrl);
      assert.equal(await found(node, 'backedup'), 3);
      assert.equal(await found(node, 'lost'), 0);
      // The restored registry takes writes again.
      await register(node, 'After 0');
      assert.equal(await found(node, 'after'), 1);
    },
  );
});
