import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { MIGRATIONS, MIGRATION_LOCK_ID } from '../../src/db/migrations/index.js';
import { profileOf } from '../support/discovery-helpers.js';
import {
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  testDatabase,
  TEST_PUBLIC_URL,
  type TestDatabase,
  freePort,
  startRegistryProcess,
  type RegistryProcess,
} from '@agent-registry/testkit';
import { loadRelease, stateOf } from '../support/database-fixtures.js';
import { http } from '../support/http.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const operations = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');

/** A fenced code block of a Markdown text, where it stands, with its list indentation removed. */
interface FencedBlock {
  language: string;
  section: string | undefined;
  subsection: string | undefined;
  /** The last line of text before the block (`On SQLite:`). */
  label: string;
  code: string;
}

function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let section: string | undefined;
  let subsection: string | undefined;
  let label = '';
  let open: { language: string; indent: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (open !== undefined) {
      if (line === `${open.indent}\`\`\``) {
        blocks.push({ language: open.language, section, subsection, label, code: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line.startsWith(open.indent) ? line.slice(open.indent.length) : line);
      continue;
    }
    const fence = /^( *)```(\S*)/.exec(line);
    if (fence !== null) open = { indent: fence[1] ?? '', language: fence[2] ?? '', lines: [] };
    else if (line.startsWith('## ')) [section, subsection] = [line.slice(3), undefined];
    else if (line.startsWith('### ')) subsection = line.slice(4);
    else if (line.trim() !== '') label = line.trim();
  }
  return blocks;
}

/**
 * The ```sh blocks under a `## section` and its `### subsection` of a Markdown text, as written: the
 * test runs what an operator copies.
 */
function shellBlocks(markdown: string, section: string, subsection: string): string[] {
  const blocks = fencedBlocks(markdown)
    .filter(
      (block) => block.language === 'sh' && block.section === section && block.subsection === subsection,
    )
    .map(({ code }) => code);
  assert.ok(blocks.length > 0, `docs/operations.md has a sh block under "${section}" / "${subsection}"`);
  return blocks;
}

/** The one ```sh block of a `## section`, outside its subsections, whose text before it ends with `label`. */
function labelledBlock(markdown: string, section: string, label: string): string {
  const blocks = fencedBlocks(markdown).filter(
    (block) =>
      block.language === 'sh' &&
      block.section === section &&
      block.subsection === undefined &&
      block.label.endsWith(label),
  );
  assert.equal(blocks.length, 1, `docs/operations.md has one sh block after "${label}" under "${section}"`);
  return blocks[0]?.code ?? '';
}

const LINKED = [
  'package.json',
  'package-lock.json',
  'tsconfig.base.json',
  'node_modules',
  'packages',
  'scripts',
];

/**
 * A directory that looks like a checkout to npm (its package.json and code are the repository's, by
 * symbolic link) with data of its own, inside a parent of its own, so the docs' relative paths (data in
 * the checkout, backups beside it) land in the test's directories.
 */
function checkoutLike(): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-docs-'));
  const dir = path.join(parent, 'agent-registry');
  fs.mkdirSync(dir);
  for (const entry of LINKED) fs.symlinkSync(path.join(root, entry), path.join(dir, entry));
  return dir;
}

/** Where the docs' backups go: a directory beside the checkout, never inside it. */
function backupsBeside(checkout: string): string {
  return path.join(path.dirname(checkout), 'registry-backups');
}

/** What the test put in a checkout-like directory itself: the repository's files, linked. */
function notLinked(name: string): boolean {
  return !LINKED.includes(name);
}

/**
 * Runs one block with bash as an operator's shell would, stopping at its first failing command; its
 * standard output.
 */
async function runBlock(
  block: string,
  cwd: string,
  databaseUrl: string | undefined,
  extra: Record<string, string> = {},
): Promise<string> {
  // npm's own variables from the test's runner would point npm at the repository's configuration.
  const env: Record<string, string | undefined> = Object.fromEntries(
    Object.entries(process.env).filter(
      // The test runner's own variable would make a `node --test` in a block report to this runner.
      ([name]) => !name.startsWith('npm_') && name !== 'NODE_TEST_CONTEXT',
    ),
  );
  // Unset on SQLite: the registry's default, ./data/registry.db, is the docs' file.
  if (databaseUrl === undefined) delete env.DATABASE_URL;
  else env.DATABASE_URL = databaseUrl;
  Object.assign(env, extra);
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', block], { cwd, env });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  assert.equal(code, 0, `${block}\n---\n${output}`);
  return stdout;
}

async function register(node: RegistryProcess, name: string): Promise<{ did: string; token: string }> {
  const body = await registrationBody(ed25519Agent(), profileOf(name), Date.now());
  const response = await http(node, 'POST', '/api/agents/register', undefined, body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as { did: string; token: string };
}

async function found(node: RegistryProcess, word: string): Promise<number> {
  const response = await http(node, 'GET', `/api/agents/search?q=${word}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.total as number;
}

const dialect = testDatabase === 'sqlite' ? 'SQLite' : 'PostgreSQL';

describe(`docs/operations.md, Backups and Restore (${dialect}), word for word`, () => {
  let dir: string;
  let testDb: TestDatabase | undefined;
  let databaseUrl: string | undefined;
  let node: RegistryProcess | undefined;

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
    if (dir !== undefined) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
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
      node = await startRegistryProcess({ DATABASE_URL: nodeUrl, PUBLIC_URL: TEST_PUBLIC_URL });
      for (let index = 0; index < 3; index += 1) await register(node, `Backedup ${index}`);

      for (const block of shellBlocks(operations, 'Backups', dialect))
        await runBlock(block, dir, databaseUrl);
      // The copy holds the signing keys: it lands outside the checkout, one `git add .` away from nothing.
      const backups = fs.readdirSync(backupsBeside(dir));
      assert.equal(backups.length, 1, backups.join(', '));
      assert.deepEqual(
        fs.readdirSync(dir).filter((name) => notLinked(name) && name !== 'data'),
        [],
        'nothing but the database in the checkout',
      );

      for (let index = 0; index < 2; index += 1) await register(node, `Lost ${index}`);
      assert.equal(await found(node, 'lost'), 2);
      await node.stop();
      node = undefined;

      for (const block of shellBlocks(operations, 'Restore', dialect))
        await runBlock(block, dir, databaseUrl);

      node = await startRegistryProcess({ DATABASE_URL: nodeUrl, PUBLIC_URL: TEST_PUBLIC_URL });
      assert.equal(await found(node, 'backedup'), 3);
      assert.equal(await found(node, 'lost'), 0);
      // The restored registry takes writes again.
      await register(node, 'After 0');
      assert.equal(await found(node, 'after'), 1);
    },
  );
});

/** Lines that pino wrote, as JSON. */
interface LogLine {
  msg?: string;
  pending?: string[];
  migration?: string;
}

interface Started {
  url: string;
  logs: LogLine[];
  stop(): Promise<void>;
}

/**
 * `npm start` in the checkout, as step 2 deploys the new version, at the default log level. It
 * resolves once the node listens; `ready()` waits for its `ready at` line.
 */
async function npmStart(
  cwd: string,
  databaseUrl: string | undefined,
  extra: Record<string, string>,
): Promise<Started & { ready(): Promise<void> }> {
  const env: Record<string, string | undefined> = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && name !== 'LOG_LEVEL'),
  );
  if (databaseUrl === undefined) delete env.DATABASE_URL;
  else env.DATABASE_URL = databaseUrl;
  const port = await freePort();
  Object.assign(env, { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: TEST_PUBLIC_URL }, extra);
  // Its own process group: npm, the build check and the node stop together.
  const child = spawn('npm', ['start'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: LogLine[] = [];
  let output = '';
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line) as LogLine);
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let done = false;
  void exited.then(() => (done = true));
  const url = `http://127.0.0.1:${port}`;
  const until = async (what: string, check: () => Promise<boolean>) => {
    // Bounded by attempts: the first start of a checkout builds the server.
    for (let attempt = 0; attempt < 6000; attempt += 1) {
      if (await check()) return;
      assert.ok(!done, `npm start exited before ${what}:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`npm start: no ${what}:\n${output}`);
  };
  await until('listening', async () => {
    try {
      await fetch(`${url}/healthz`);
      return true;
    } catch {
      return false;
    }
  });
  return {
    url,
    logs,
    ready: () =>
      until('ready at line', async () => logs.some(({ msg }) => msg?.includes(' ready at ') === true)),
    stop: async () => {
      if (!done && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}

/**
 * Holds what a migration needs first (PostgreSQL's advisory lock, SQLite's write lock), so that a
 * starting node waits in its migration while the test looks at it.
 */
async function holdMigrations(nodeUrl: string, file: string | undefined): Promise<() => Promise<void>> {
  if (file !== undefined) {
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.exec('begin immediate');
    return async () => {
      sqlite.exec('commit');
      sqlite.close();
    };
  }
  const client = new pg.Client({ connectionString: nodeUrl });
  await client.connect();
  await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
  return async () => {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    await client.end();
  };
}

describe(`docs/operations.md, Upgrades and migrations (${dialect}), step by step`, () => {
  let dir: string;
  let testDb: TestDatabase | undefined;
  let databaseUrl: string | undefined;
  let started: Started | undefined;

  before(async () => {
    dir = checkoutLike();
    if (testDatabase === 'postgres') {
      testDb = await createTestDatabase();
      databaseUrl = testDb.url;
    }
  });

  after(async () => {
    await started?.stop();
    await testDb?.drop();
    if (dir !== undefined) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  test(
    'from the first complete release: back up, start the new version, watch the log, go back to the backup',
    // The first `npm run backup` of a checkout builds the server, as `npm start` does.
    { timeout: 15 * 60_000 },
    async () => {
      const section = 'Upgrades and migrations';
      const file = databaseUrl === undefined ? path.join(dir, 'data', 'registry.db') : undefined;
      const nodeUrl = databaseUrl ?? `sqlite:${file}`;
      const database = { url: nodeUrl, file };
      await loadRelease(database);
      const release = await stateOf(database);
      const pending = MIGRATIONS.map(([name]) => name).filter((name) => !release.applied.includes(name));
      assert.ok(pending.length > 0, 'the fixture is of an earlier release');

      // 1. Back up.
      await runBlock(labelledBlock(operations, section, `On ${dialect}:`), dir, databaseUrl);
      assert.deepEqual(fs.readdirSync(backupsBeside(dir)), [
        `registry-pre-upgrade.${file === undefined ? 'dump' : 'db'}`,
      ]);
      assert.ok(!fs.existsSync(path.join(dir, 'backup')), 'no backup inside the checkout');

      // 2. Deploy the new version. While it migrates it is live, not ready.
      const letGo = await holdMigrations(nodeUrl, file);
      let node: Awaited<ReturnType<typeof npmStart>>;
      try {
        node = await npmStart(dir, databaseUrl, { SQLITE_BUSY_TIMEOUT_MS: '60000' });
        started = node;
        const health = await fetch(`${node.url}/healthz`);
        assert.equal(health.status, 200);
        assert.equal(((await health.json()) as { status: string }).status, 'starting');
        const readiness = await fetch(`${node.url}/readyz`);
        assert.equal(readiness.status, 503);
        assert.ok(readiness.headers.get('retry-after'), 'Retry-After while starting');
        assert.equal(((await readiness.json()) as { code: string }).code, 'DATABASE_UNAVAILABLE');
      } finally {
        await letGo();
      }
      await node.ready();

      // 3. The log: the pending migrations, one line per migration with its duration, `ready at`.
      const messages = node.logs.map(({ msg }) => msg ?? '');
      const announced = node.logs.findIndex(({ pending: names }) => names !== undefined);
      assert.ok(announced >= 0, messages.join('\n'));
      assert.deepEqual(node.logs[announced]?.pending, pending);
      assert.equal(
        messages[announced],
        `migrating the database: ${pending.length} pending, ${pending[0]} to ${pending.at(-1)}`,
      );
      const applied = messages.slice(announced + 1, announced + 1 + pending.length);
      assert.deepEqual(
        applied.map((message) => message.replace(/ in \d+ ms$/, ' in N ms')),
        pending.map((name) => `database migration ${name} applied in N ms`),
      );
      const ready = messages.findIndex((message) => message.includes(` ready at ${TEST_PUBLIC_URL}`));
      assert.ok(ready > announced + pending.length, messages.join('\n'));
      const health = await fetch(`${node.url}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { status: string }).status, 'ok');
      assert.equal((await fetch(`${node.url}/readyz`)).status, 200);
      const upgraded = await stateOf(database);
      assert.deepEqual(upgraded.applied, MIGRATIONS.map(([name]) => name).sort());

      // 4. Go back: stop, restore the backup of step 1.
      await node.stop();
      started = undefined;
      if (file !== undefined) {
        for (const block of shellBlocks(operations, 'Restore', dialect))
          await runBlock(block, dir, databaseUrl);
      } else await runBlock(labelledBlock(operations, section, "as the database's owner:"), dir, databaseUrl);
      // The earlier release is not at hand: the database is the one it left, history and rows.
      assert.deepEqual(await stateOf(database), release);

      // Started again, this release migrates it again.
      node = await npmStart(dir, databaseUrl, {});
      started = node;
      await node.ready();
      assert.deepEqual(
        node.logs.flatMap(({ migration }) => (migration === undefined ? [] : [migration])),
        pending,
      );
      assert.deepEqual(await stateOf(database), upgraded);
    },
  );
});

/**
 * Every shell block of README.md and docs/: where a test runs it, or why none can on one machine. A
 * block added to the docs fails this until it is run or explained here.
 */
const SHELL_BLOCKS: Record<string, string> = {
  'README.md: npm ci && npm start     # install, build, and serve on http://localhost:8080 (SQLite under ./data)':
    'npm start never exits, npm ci reinstalls the checkout, npm test is the whole suite',
  'README.md: npx agent-registry init --name "Shouter" --capability "uppercase:Upper-cases text"   # key + profile, mode 0600':
    'the worker never exits: packages/cli/test/two-minutes.test.ts runs it command for command',
  'README.md: export AGENT_REGISTRY_HOME=~/.config/agent-registry-caller   # one config directory per agent':
    '<did> and <task id> placeholders: packages/cli/test/two-minutes.test.ts runs it command for command',
  'docs/ard.md: git clone https://github.com/ards-project/ard-spec && git -C ard-spec checkout 5fa2f5a':
    'clones a repository from GitHub, which CI does not reach; test/http/faces/ard/ard.test.ts runs the tool when ARD_CONFORMANCE_TOOL names it',
  'docs/federation.md: # Each peer and import source: state, last verified checkpoint, entries, last error (with the token)':
    'example registry, peer and tokens: packages/cli/test/federation.test.ts runs both commands against a real registry following peers',
  'docs/mirroring.md: # From the beginning (no since): every agent the registry has known, each at its latest state.':
    'example cursor of a registry of more than 1,000 agents at localhost:8080',
  'docs/moderation.md: export REGISTRY=https://registry.example TOKEN="$FEDERATION_ADMIN_TOKEN"':
    'example registry, token and DID: test/http/moderation/moderation.test.ts makes the same requests against a real registry',
  'docs/operations.md: npm ci && npm start          # PORT=8080, data in ./data/registry.db':
    'npm start never exits, npm ci reinstalls the checkout',
  'docs/operations.md: export DATABASE_URL=postgres://registry:secret@db.internal:5432/registry':
    'another machine (db.internal) with a password, and the node never exits',
  'docs/operations.md: npm run backup -- ../registry-backups/registry-$(date +%F).db': 'run here',
  'docs/operations.md: npm run backup -- ../registry-backups/registry-$(date +%F).dump': 'run here',
  'docs/operations.md: latest=$(ls -t ../registry-backups/registry-*.db | head -n 1)': 'run here',
  'docs/operations.md: latest=$(ls -t ../registry-backups/registry-*.dump | head -n 1)': 'run here',
  'docs/operations.md: npm run backup -- ../registry-backups/registry-pre-upgrade.db': 'run here',
  'docs/operations.md: npm run backup -- ../registry-backups/registry-pre-upgrade.dump': 'run here',
  "docs/operations.md: psql \"$DATABASE_URL\" -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public'":
    'run here',
  "docs/search.md: curl -s 'http://localhost:8080/api/agents/search?q=translate&limit=20'":
    'the cursor is elided (eyJ2IjoxLCJzIjoi...)',
  'docs/testing.md: cd packages/server': 'run here',
  'docs/transparency-log.md: agent-registry mirror ./registry-mirror --registry https://registry.example \\':
    'example registry and verifier key: test/cross-node/transparency-log-mirror.test.ts runs the command against a real registry',
  'docs/webhooks.md: curl -X PUT "$REGISTRY/api/agents/$(node -p \'encodeURIComponent(process.argv[1])\' "$DID")/invocation" \\':
    'run here',
};

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

describe('the shell blocks of README.md and docs/', () => {
  test('each is run by a test or says why it cannot run on one machine', () => {
    const files = [
      'README.md',
      ...fs
        .readdirSync(path.join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const found = files.flatMap((file) =>
      fencedBlocks(fs.readFileSync(path.join(root, file), 'utf8'))
        .filter(({ language }) => SHELL.has(language))
        .map(({ code }) => `${file}: ${code.split('\n')[0] ?? ''}`),
    );
    assert.deepEqual(found.sort(), Object.keys(SHELL_BLOCKS).sort());
  });

  test('docs/webhooks.md: configuring webhook delivery with curl, word for word', async (t) => {
    const curl = spawn('curl', ['--version']);
    const present = await new Promise<boolean>((resolve) => {
      curl.once('error', () => resolve(false));
      curl.once('close', (code) => resolve(code === 0));
    });
    if (!present) return t.skip('curl is not installed');
    const [block] = fencedBlocks(fs.readFileSync(path.join(root, 'docs/webhooks.md'), 'utf8')).filter(
      ({ language }) => language === 'sh',
    );
    assert.ok(block !== undefined);
    const database = await createTestDatabase();
    const node = await startRegistryProcess({ DATABASE_URL: database.url, PUBLIC_URL: TEST_PUBLIC_URL });
    try {
      const { did, token } = await register(node, 'Hooked 0');
      const output = await runBlock(block.code, root, database.url, {
        REGISTRY: node.url,
        DID: did,
        TOKEN: token,
      });
      const answer = JSON.parse(output) as Record<string, unknown>;
      assert.equal(answer.delivery_mode, 'webhook', output);
      assert.equal(answer.webhook_url, 'https://agent.example/invoke', output);
      assert.match(String(answer.webhook_secret), /^whsec_/);
    } finally {
      await node.stop();
      await database.drop();
    }
  });

  test(
    'docs/testing.md: one test file against PostgreSQL, word for word',
    { timeout: 10 * 60_000 },
    async (t) => {
      // The block chooses PostgreSQL itself: once, in the PostgreSQL pass, is enough.
      if (testDatabase !== 'postgres') return t.skip('runs in the PostgreSQL pass (TEST_DATABASE=postgres)');
      const [block, ...others] = fencedBlocks(
        fs.readFileSync(path.join(root, 'docs/testing.md'), 'utf8'),
      ).filter(({ language }) => language === 'sh');
      assert.ok(block !== undefined && others.length === 0);
      const output = await runBlock(block.code, root, undefined);
      assert.match(output, /^# fail 0$/m, output);
    },
  );
});

describe('a backup made inside the clone all the same', () => {
  test('is ignored by git: the copy holds the signing keys', () => {
    for (const file of ['backup/registry.db', 'backup/registry-pre-upgrade.dump', 'backups/registry.db']) {
      const check = spawnSync('git', ['check-ignore', '--no-index', '--quiet', file], { cwd: root });
      assert.equal(check.status, 0, `${file} is not in .gitignore`);
    }
  });
});
