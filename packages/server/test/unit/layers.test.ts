import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The server's layers (packages/server/src/modules/README.md and docs/architecture.md): every relative
 * import points down or sideways, never up, and no files import each other in a loop.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Lower first. A file may import its own layer (within the rules below) and every layer before it. */
const LAYERS = ['kernel', 'db', 'telemetry', 'http', 'modules', 'faces', 'root'] as const;
type Layer = (typeof LAYERS)[number];

/** Modules, lower first: a module may import itself and the modules before it. */
const MODULES = [
  'identity',
  'capabilities',
  'service-record',
  'availability',
  'agents',
  'tasks',
  'reviews',
  'discovery',
  'transparency-log',
  'federation',
  'operations',
] as const;

/** What each module may import besides kernel/, db/, telemetry/ and http/ (its README says the same). */
const MODULE_IMPORTS: Record<(typeof MODULES)[number], readonly string[]> = {
  identity: [],
  capabilities: [],
  'service-record': ['identity'],
  availability: [],
  agents: ['identity', 'capabilities', 'service-record', 'availability'],
  tasks: ['agents', 'capabilities', 'identity'],
  reviews: ['agents', 'identity'],
  discovery: ['identity', 'capabilities', 'service-record', 'availability', 'agents', 'tasks', 'reviews'],
  'transparency-log': ['identity', 'agents'],
  federation: ['agents', 'discovery'],
  operations: [],
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Relative imports of a file (static, dynamic and re-exports), resolved to source paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    found.push(path.resolve(path.dirname(file), match[1]!.replace(/\.js$/, '.ts')));
  }
  return found;
}

function placeOf(file: string): { layer: Layer; module?: string } {
  const [top, second] = path.relative(SRC, file).split(path.sep);
  if (top === undefined || second === undefined) return { layer: 'root' };
  if (top === 'modules') return { layer: 'modules', module: second.endsWith('.ts') ? undefined : second };
  if ((LAYERS as readonly string[]).includes(top)) return { layer: top as Layer };
  return { layer: 'root' };
}

const files = sourceFiles(SRC);
const graph = new Map(
  files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(SRC))]),
);
const relative = (file: string) => path.relative(SRC, file);

test('layers: no relative import of packages/server/src points up a layer', () => {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = placeOf(file);
    for (const target of targets) {
      const to = placeOf(target);
      if (LAYERS.indexOf(to.layer) > LAYERS.indexOf(from.layer)) {
        // Faces use the composition root's AppContext type; nothing else reaches the root.
        const contextType = from.layer === 'faces' && relative(target) === 'context.ts';
        if (!contextType) wrong.push(`${relative(file)} -> ${relative(target)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('layers: a module imports only itself and the modules its README allows', () => {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = placeOf(file).module as (typeof MODULES)[number] | undefined;
    if (from === undefined) continue;
    assert.ok(MODULES.includes(from), `modules/${from} is not in the list of modules of this test`);
    for (const target of targets) {
      const to = placeOf(target).module;
      if (to !== undefined && to !== from && !MODULE_IMPORTS[from].includes(to)) {
        wrong.push(`${relative(file)} -> ${relative(target)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('layers: no files of packages/server/src import each other in a loop', () => {
  const state = new Map<string, 'open' | 'done'>();
  const loops: string[] = [];
  const visit = (file: string, trail: string[]): void => {
    state.set(file, 'open');
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') {
        loops.push([...trail.slice(trail.indexOf(target)), file, target].map(relative).join(' -> '));
      } else if (!state.has(target)) {
        visit(target, [...trail, file]);
      }
    }
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file, []);
  assert.deepEqual(loops, []);
});

test('layers: the check reads the imports it judges', () => {
  // Guards the regular expression: the composition root imports every module, so it must see them.
  const context = graph.get(path.join(SRC, 'context.ts')) ?? [];
  for (const name of ['agents', 'tasks', 'reviews', 'discovery']) {
    assert.ok(
      context.some((target) => placeOf(target).module === name),
      `context.ts imports nothing of modules/${name}?`,
    );
  }
});

test('layers: no package source imports the test kit or the server it starts', () => {
  const packages = fileURLToPath(new URL('../../../', import.meta.url));
  const wrong: string[] = [];
  for (const name of fs.readdirSync(packages)) {
    const src = path.join(packages, name, 'src');
    if (name === 'testkit' || !fs.existsSync(src)) continue;
    for (const file of sourceFiles(src)) {
      const text = fs.readFileSync(file, 'utf8');
      if (/from '@agent-registry\/testkit/.test(text)) wrong.push(path.relative(packages, file));
      if (name !== 'server' && /from '@agent-registry\/server/.test(text))
        wrong.push(path.relative(packages, file));
    }
  }
  assert.deepEqual(wrong, []);
});
