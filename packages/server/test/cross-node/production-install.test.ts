import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ed25519Agent,
  freePort,
  registrationBody,
  testDatabase,
  TEST_PUBLIC_URL,
} from '@agent-registry/testkit';

/**
 * The image's layout without a container (this machine cannot pull a base image; docs/deploy.md): the
 * runtime stage of the Dockerfile, read from the Dockerfile itself, assembled in a clean directory from
 * what its build stage would hold (production dependencies only, the server built), made read-only and
 * started with the image's environment and command as a non-root user.
 */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const NOBODY = 65534;
const skip =
  testDatabase === 'postgres'
    ? 'runs in the SQLite pass (the layout does not depend on the database)'
    : false;

interface RuntimeStage {
  copies: [from: string, to: string][];
  env: Record<string, string>;
  command: string[];
}

/** The COPY --from=build, ENV and CMD instructions of the Dockerfile's last stage. */
function runtimeStage(): RuntimeStage {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const lines = text.split('\n');
  const last = lines.findLastIndex((line) => /^FROM\s/.test(line));
  const stage = lines.slice(last);
  const copies: [string, string][] = [];
  const env: Record<string, string> = {};
  let command: string[] = [];
  for (const line of stage) {
    const copy = /^COPY --from=build \/app\/(\S+) (\S+)$/.exec(line.trim());
    if (copy) copies.push([copy[1]!, copy[2]!]);
    const set = /^ENV (.+)$/.exec(line.trim());
    if (set)
      for (const pair of set[1]!.trim().split(/\s+/))
        env[pair.split('=')[0]!] = pair.slice(pair.indexOf('=') + 1);
    const cmd = /^CMD (\[.*\])$/.exec(line.trim());
    if (cmd) command = JSON.parse(cmd[1]!) as string[];
  }
  return { copies, env, command };
}

/** node_modules as `npm prune --omit=dev` leaves it: the server's production dependencies. */
function productionModules(into: string): void {
  const listed = execFileSync(
    'npm',
    ['ls', '--omit=dev', '--all', '--parseable', '-w', '@agent-registry/server'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const modules = path.join(ROOT, 'node_modules');
  for (const dir of listed.split('\n')) {
    if (!dir.startsWith(`${modules}${path.sep}`)) continue;
    const target = path.join(into, path.relative(modules, dir));
    if (fs.existsSync(target)) continue; // nested in a package copied whole already
    fs.mkdirSync(path.dirname(target), { recursive: true });
    // A workspace package is a link to packages/<name>, in the image as here.
    if (fs.lstatSync(dir).isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(dir), target);
    else fs.cpSync(dir, target, { recursive: true, verbatimSymlinks: true });
  }
}

/** What the build stage's /app holds at `from`. */
function built(from: string, to: string, stage: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  if (from === 'node_modules') productionModules(to);
  else if (from === 'packages/server/dist') {
    execFileSync(
      path.join(ROOT, 'node_modules/.bin/tsc'),
      [
        '-p',
        'packages/server/tsconfig.build.json',
        '--outDir',
        to,
        '--tsBuildInfoFile',
        path.join(stage, 'server.tsbuildinfo'),
      ],
      { cwd: ROOT, stdio: 'inherit' },
    );
    fs.writeFileSync(
      path.join(to, 'build-info.json'),
      `${JSON.stringify({ commit: null, built_at: new Date().toISOString() })}\n`,
    );
  } else fs.cpSync(path.join(ROOT, from), to, { recursive: true });
}

function files(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test(
  "the image's runtime layout, built without a container, starts read-only as a non-root user, serves and stops on SIGTERM",
  { skip, timeout: 10 * 60_000 },
  async () => {
    const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-image-'));
    const app = path.join(stage, 'app');
    const data = path.join(stage, 'data');
    try {
      const runtime = runtimeStage();
      assert.ok(
        runtime.copies.length > 0,
        'the Dockerfile has a runtime stage that copies from the build stage',
      );
      for (const [from, to] of runtime.copies) {
        const target = path.join(app, to);
        built(from, to.endsWith('/') ? path.join(target, path.basename(from)) : target, stage);
      }
      const before = files(app);
      // Read-only code, owned by root as in the image; only the data directory is the user's.
      execFileSync('chmod', ['-R', 'a-w,a+rX', app]);
      fs.chmodSync(stage, 0o755);
      fs.mkdirSync(data);
      const asRoot = process.getuid?.() === 0;
      if (asRoot) fs.chownSync(data, NOBODY, NOBODY);

      const port = await freePort();
      const env = {
        PATH: process.env.PATH ?? '',
        ...runtime.env,
        HOME: data,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: TEST_PUBLIC_URL,
        DATABASE_URL: (runtime.env.DATABASE_URL ?? '').replace('/data/', `${data}/`),
      };
      assert.equal(runtime.command[0], 'node');
      const child = spawn(process.execPath, runtime.command.slice(1), {
        cwd: app,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        const url = `http://127.0.0.1:${port}`;
        let ready = false;
        for (let attempt = 0; attempt < 600 && !ready; attempt++) {
          assert.equal(child.exitCode, null, output);
          ready = await fetch(`${url}/readyz`).then(
            (response) => response.ok,
            () => false,
          );
          if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.ok(ready, output);
        // The image's HEALTHCHECK command, run as the image runs it.
        const health = execFileSync(process.execPath, [
          '-e',
          `fetch('${url}/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`,
        ]);
        assert.equal(health.length, 0);
        const registered = await fetch(`${url}/api/agents/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(
            await registrationBody(
              ed25519Agent(),
              { name: 'Image check', capabilities: [{ type: 'echo' }] },
              Date.now(),
            ),
          ),
        });
        assert.equal(registered.status, 201, await registered.text());
        const page = await fetch(`${url}/`);
        assert.equal(page.status, 200, 'the web pages and their assets are in the image');
        assert.match(await page.text(), /Image check/);
      } finally {
        child.kill('SIGTERM');
      }
      assert.equal(await exited, 0, output);
      assert.deepEqual(files(app), before, 'nothing was written outside the data directory');
      assert.ok(fs.existsSync(path.join(data, 'registry.db')));
    } finally {
      execFileSync('chmod', ['-R', 'u+w', stage]);
      fs.rmSync(stage, { recursive: true, force: true });
    }
  },
);
