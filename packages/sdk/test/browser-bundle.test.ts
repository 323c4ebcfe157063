import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { test } from 'node:test';
import { build } from 'esbuild';

test('the main entry bundles for the browser with no Node built-ins', async () => {
  const result = await build({
    entryPoints: [new URL('../src/index.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  assert.equal(result.errors.length, 0);
  const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
  const imports = Object.values(result.metafile.inputs).flatMap((input) =>
    input.imports.map((entry) => entry.path),
  );
  assert.deepEqual(
    imports.filter((path) => path.startsWith('node:') || builtins.has(path)),
    [],
  );
  const code = result.outputFiles[0]!.text;
  assert.doesNotMatch(code, /from\s*["']node:|require\(["']node:/);
  // The bundle is the whole client: keys, client, worker and webhook helper.
  for (const name of ['RegistryClient', 'AgentKey', 'verifyWebhook', 'serve'])
    assert.match(code, new RegExp(name));
});

test('the node entry is where the file system lives', async () => {
  const result = await build({
    entryPoints: [new URL('../src/node.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  }).catch((error: { errors: { text: string }[] }) => error);
  assert.ok('errors' in result && result.errors.some((error) => /node:fs/.test(error.text)));
});
