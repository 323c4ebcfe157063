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

const MODULES_DIR = path.join(SRC, 'modules');

/** The modules: every folder of modules/. */
const MODULES = fs
  .readdirSync(MODULES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/**
 * What a module may import besides kernel/, db/, telemetry/ and http/: its README's one "May import:"
 * line, which names modules as `name/` or says "no other module". The README is the only statement of
 * the rule; this reads it.
 */
function readAllowances(): Map<string, string[]> {
  const allowances = new Map<string, string[]>();
  for (const name of MODULES) {
    const readme = path.join(MODULES_DIR, name, 'README.md');
    assert.ok(fs.existsSync(readme), `modules/${name} has no README.md`);
    const lines = fs
      .readFileSync(readme, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('May import:'));
    assert.equal(lines.length, 1, `modules/${name}/README.md needs exactly one line starting "May import:"`);
    const line = lines[0]!;
    const named = [...line.matchAll(/`([a-z-]+)\/`/g)].map((match) => match[1]!);
    if (named.length === 0) {
      assert.match(line, /^May import: no other module\./, `modules/${name}/README.md: "${line}"`);
    }
    for (const other of named) {
      assert.ok(MODULES.includes(other) && other !== name, `modules/${name}/README.md names ${other}/`);
    }
    allowances.set(name, named);
  }
  return allowances;
}
const MODULE_IMPORTS = readAllowances();

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

type Graph = ReadonlyMap<string, readonly string[]>;

/** Imports of one module by another that its README does not allow. */
function unallowedImports(graph: Graph, allowances: ReadonlyMap<string, readonly string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = placeOf(file).module;
    if (from === undefined) continue;
    for (const target of targets) {
      const to = placeOf(target).module;
      if (to !== undefined && to !== from && !(allowances.get(from) ?? []).includes(to)) {
        wrong.push(`${relative(file)} -> ${relative(target)}`);
      }
    }
  }
  return wrong;
}

/** Modules a README allows that the module never imports: an allow-list says what is used, no more. */
function unusedAllowances(graph: Graph, allowances: ReadonlyMap<string, readonly string[]>): string[] {
  const used = new Set<string>();
  for (const [file, targets] of graph) {
    const from = placeOf(file).module;
    for (const target of targets) {
      const to = placeOf(target).module;
      if (from !== undefined && to !== undefined && to !== from) used.add(`${from} -> ${to}`);
    }
  }
  const unused: string[] = [];
  for (const [from, allowed] of allowances) {
    for (const to of allowed) if (!used.has(`${from} -> ${to}`)) unused.push(`${from} -> ${to}`);
  }
  return unused;
}

/** Loops among the modules' allowances: the modules must stand in an order. */
function allowanceLoops(allowances: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const loops: string[] = [];
  const visit = (name: string, trail: string[]): void => {
    state.set(name, 'open');
    for (const next of allowances.get(name) ?? []) {
      if (state.get(next) === 'open')
        loops.push([...trail.slice(trail.indexOf(next)), name, next].join(' -> '));
      else if (!state.has(next)) visit(next, [...trail, name]);
    }
    state.set(name, 'done');
  };
  for (const name of allowances.keys()) if (!state.has(name)) visit(name, []);
  return loops;
}

test('layers: a module imports only itself and the modules its README allows', () => {
  assert.deepEqual(unallowedImports(graph, MODULE_IMPORTS), []);
});

test("layers: a module's README allows only modules it imports", () => {
  assert.deepEqual(unusedAllowances(graph, MODULE_IMPORTS), []);
});

test("layers: the modules' READMEs allow no loop", () => {
  assert.deepEqual(allowanceLoops(MODULE_IMPORTS), []);
});

test('layers: the module checks fail on a planted violation and on an unused allowance', () => {
  const file = (name: string) => path.join(SRC, 'modules', name, 'planted.ts');
  const planted: Graph = new Map([
    [file('identity'), [file('agents')]],
    [file('agents'), [file('identity')]],
  ]);
  const allowances = new Map([
    ['identity', []],
    ['agents', ['identity', 'tasks']],
    ['tasks', ['agents']],
  ]);
  assert.deepEqual(unallowedImports(planted, allowances), [
    'modules/identity/planted.ts -> modules/agents/planted.ts',
  ]);
  assert.deepEqual(unusedAllowances(planted, allowances), ['agents -> tasks', 'tasks -> agents']);
  assert.deepEqual(allowanceLoops(allowances), ['agents -> tasks -> agents']);
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
  for (const name of ['agents', 'tasks', 'reviews', 'search', 'stats']) {
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
