import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  startRegistryImportingCards,
  testDatabase,
  type AgentCardHost,
  type RegistryProcess,
} from '@agent-registry/testkit';
import { AgentKey, RegistryClient, capabilitiesDigest, type RemoteEntry } from '../src/index.js';

describe(`federated search and remote entries against a real registry (${testDatabase})`, () => {
  let started: Awaited<ReturnType<typeof startRegistryImportingCards>>;
  let registry: RegistryProcess;
  let hosts: AgentCardHost[];
  let client: RegistryClient;
  let localDid: string;

  before(async () => {
    started = await startRegistryImportingCards([
      { name: 'Remote Planner', description: 'Plans routes elsewhere', skill: 'route_planning' },
      { name: 'Remote Mapper', description: 'Draws maps elsewhere', skill: 'route_planning' },
    ]);
    ({ registry, hosts } = started);
    client = new RegistryClient({ registry: registry.url });
    const agent = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    localDid = (
      await agent.register({
        name: 'Local Planner',
        description: 'Plans routes here',
        capabilities: [{ type: 'route_planning', description: 'Plans routes' }],
        tags: ['maps'],
      })
    ).did;
  });

  after(() => started?.close());

  test('the default scope is local: only agents registered here, each saying so', async () => {
    const page = await client.search({ capability: 'route_planning' });
    assert.deepEqual(
      page.agents.map((agent) => agent.did),
      [localDid],
    );
    assert.equal(page.agents[0]?.home_registry, registry.url);
    assert.equal(page.agents[0]?.provenance.kind, 'registered');
    const explicit = await client.search({ capability: 'route_planning', scope: 'local' });
    assert.deepEqual(
      explicit.agents.map((agent) => agent.did),
      [localDid],
    );
  });

  test('scope federated adds the remote entries, with their home registry and provenance', async () => {
    const page = await client.search({ capability: 'route_planning', scope: 'federated' });
    assert.equal(page.total, 3);
    const remote = page.agents.find((agent) => agent.name === 'Remote Planner');
    assert.ok(remote, JSON.stringify(page.agents));
    assert.equal(remote.home_registry, hosts[0]?.origin);
    assert.equal(remote.provenance.kind, 'imported');
    assert.equal(remote.provenance.verification, 'unsigned');
    assert.equal(remote.provenance.source_url, hosts[0]?.cardUrl);
    assert.equal(page.agents.find((agent) => agent.did === localDid)?.provenance.kind, 'registered');
  });

  test('searchAll keeps the scope on every page', async () => {
    const names: string[] = [];
    for await (const agent of client.searchAll({
      capability: 'route_planning',
      scope: 'federated',
      limit: 1,
    }))
      names.push(agent.name);
    assert.deepEqual(names.sort(), ['Local Planner', 'Remote Mapper', 'Remote Planner']);
    const local: string[] = [];
    for await (const agent of client.searchAll({ capability: 'route_planning', limit: 1 }))
      local.push(agent.name);
    assert.deepEqual(local, ['Local Planner']);
  });

  test('listRemoteEntries filters by source, kind and verification, and pages with after', async () => {
    const source = `a2a:${hosts[1]?.cardUrl}`;
    const bySource = await client.listRemoteEntries({ source });
    assert.deepEqual(
      bySource.entries.map((entry) => entry.name),
      ['Remote Mapper'],
    );
    assert.equal(bySource.entries[0]?.home_registry, hosts[1]?.origin);
    assert.equal((await client.listRemoteEntries({ kind: 'imported' })).entries.length, 2);
    assert.deepEqual((await client.listRemoteEntries({ kind: 'mirrored' })).entries, []);
    assert.deepEqual((await client.listRemoteEntries({ verification: 'verified' })).entries, []);
    assert.equal((await client.listRemoteEntries({ verification: 'unsigned' })).entries.length, 2);

    const seen: RemoteEntry[] = [];
    let after: string | undefined;
    for (let pages = 1; ; pages += 1) {
      const page = await client.listRemoteEntries({ limit: 1, ...(after === undefined ? {} : { after }) });
      assert.ok(page.entries.length <= 1);
      seen.push(...page.entries);
      if (page.next_after === null) break;
      assert.ok(pages < 5, 'next_after never ends');
      after = page.next_after;
    }
    assert.deepEqual(seen.map((entry) => entry.name).sort(), ['Remote Mapper', 'Remote Planner']);
  });

  test('getRemoteEntry reads one listed entry by its id, and an unknown id is the 404 naming it', async () => {
    const [listed] = (await client.listRemoteEntries({ source: `a2a:${hosts[0]?.cardUrl}` })).entries;
    assert.ok(listed !== undefined);
    const entry = await client.getRemoteEntry(listed.id);
    // The registry's probes may observe the entry between the two reads: the rest is the same.
    const { observed: _probedMeanwhile, ...rest } = entry;
    const { observed: _probedBefore, ...listedRest } = listed;
    assert.deepEqual(rest, listedRest);
    assert.equal(entry.name, 'Remote Planner');
    assert.equal(entry.provenance.kind, 'imported');
    await assert.rejects(
      client.getRemoteEntry(`${listed.id}-gone`),
      (error: Error & { status?: number; code?: string }) =>
        error.status === 404 && error.code === 'REMOTE_ENTRY_NOT_FOUND',
    );
  });

  test('a local hit carries capabilities_digest, recomputed by the exported capabilitiesDigest; observations page', async () => {
    const page = await client.search({ capability: 'route_planning' });
    const local = page.agents[0];
    assert.ok(local?.capabilities_digest !== undefined);
    assert.equal(local.capabilities_digest, capabilitiesDigest(local.capabilities));
    const [listed] = (await client.listRemoteEntries({ source: `a2a:${hosts[0]?.cardUrl}` })).entries;
    assert.ok(listed !== undefined);
    const history = await client.listObservations(listed.id, { limit: 10 });
    assert.ok(Array.isArray(history.observations));
    for (const observation of history.observations) assert.equal(typeof observation.log_index, 'number');
    await assert.rejects(
      client.listObservations(listed.id, { cursor: 'not-a-number' }),
      (error: Error & { status?: number }) => error.status === 400,
    );
  });

  test('a bad filter is the registry error naming it', async () => {
    await assert.rejects(
      // A value the type refuses, as plain JavaScript could send it.
      client.listRemoteEntries({ kind: 'registered' as 'mirrored' }),
      (error: Error & { status?: number }) => error.status === 400 && /kind/.test(error.message),
    );
  });
});
