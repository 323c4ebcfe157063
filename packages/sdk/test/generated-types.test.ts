import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  SEARCH_LIMITS,
  SEARCH_ORDERS,
  SEARCH_SORTS,
  type SearchOrder,
  type SearchSort,
} from '@agent-registry/protocol';
import { renderTypes } from '../scripts/render-types.js';
import type { SearchQuery } from '../src/types.js';
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

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

test("the protocol's search sorts and orders are the ones the registry documents and the generated types hold", async () => {
  // A difference between the protocol's lists and the generated types fails the typecheck.
  const sortsAgree: Same<SearchSort, NonNullable<SearchQuery['sort']>> = true;
  const ordersAgree: Same<SearchOrder, NonNullable<SearchQuery['order']>> = true;
  assert.ok(sortsAgree && ordersAgree);
  const served = (await (await fetch(`${registry.url}/openapi.json`)).json()) as {
    paths: Record<
      string,
      { get: { parameters: { name: string; schema: { enum?: string[]; default?: string } }[] } }
    >;
  };
  const parameter = (name: string) =>
    served.paths['/api/agents/search']?.get.parameters.find((candidate) => candidate.name === name)?.schema;
  assert.deepEqual(parameter('sort')?.enum, [...SEARCH_SORTS]);
  assert.deepEqual(parameter('order')?.enum, [...SEARCH_ORDERS]);
  assert.equal(parameter('order')?.default, SEARCH_LIMITS.orderDefault);
  assert.equal(parameter('limit')?.default, SEARCH_LIMITS.limitDefault);
});
