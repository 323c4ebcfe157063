import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { renderTypes } from '../scripts/render-types.js';
import { createTestDatabase, type RegistryProcess, type TestDatabase } from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

let database: TestDatabase;
let registry: RegistryProcess;
before(async () => {
  database = await createTestDatabase('sqlite');
  registry = await registryProcess(database);
});
after(async () => {
  await registry.stop();
  await database.drop();
});

test('src/generated/openapi.ts is the OpenAPI document the registry serves (run npm run generate)', async () => {
  const file = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));
  const served = (await (await fetch(`${registry.url}/openapi.json`)).json()) as object;
  assert.equal(
    readFileSync(file, 'utf8'),
    await renderTypes(served, file),
    'run: npm run generate -w @agent-registry/sdk',
  );
});
