import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, createTestDatabase } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { getJson, registerNamed } from '../../support/discovery-helpers.js';
import {
  putRemoteEntry,
  removeRemoteEntries,
  type RemoteEntryWrite,
} from '../../../src/modules/federation/remote-entries-store.js';
import { ensureSource } from '../../../src/modules/federation/remote-sources-store.js';
import { provenanceJson, type Provenance } from '../../../src/modules/agents/provenance-schemas.js';
import { mirroredEntry, PEER } from '../../support/remote-entries.js';

interface Hit {
  did: string;
  name: string;
  home_registry: string;
  provenance: Provenance;
  reputation_score: number;
}
interface SearchBody {
  agents: Hit[];
  total: number;
  next_cursor: string | null;
}

const CARD_ORIGIN = 'https://cards.example';
const CARD_URL = `${CARD_ORIGIN}/.well-known/agent-card.json`;

function importedCard(id: string, name: string, verification: Provenance['verification']): RemoteEntryWrite {
  const provenance: Provenance = {
    kind: 'imported',
    home_registry: CARD_ORIGIN,
    source_url: CARD_URL,
    format: 'a2a-agent-card',
    verification,
    fetched_at: 1_764_000_000_000,
    ...(verification === 'verified'
      ? { did: 'did:web:cards.example', kid: 'did:web:cards.example#key-1' }
      : {}),
  };
  return {
    id,
    source_id: `a2a:${CARD_URL}`,
    kind: 'imported',
    did: null,
    name,
    description: 'Translates legal contracts between German and Portuguese',
    capabilities: JSON.stringify([{ type: 'translation', description: 'German to Portuguese' }]),
    tags: JSON.stringify(['legal']),
    endpoints: JSON.stringify([{ type: 'a2a', url: `${CARD_ORIGIN}/a2a` }]),
    home_registry: CARD_ORIGIN,
    provenance: provenanceJson(provenance),
  };
}

const mirrored = (did: string, name: string): RemoteEntryWrite =>
  mirroredEntry(did, {
    name,
    description: 'Checks invoices against purchase orders',
    capability: 'invoice_matching',
    tag: 'finance',
  });

describe('remote entries: provenance, federated search, referrals', () => {
  let registry: TestRegistry;
  let local: Registered;
  let caller: Registered;
  const remoteDid = 'did:web:peer.example:agent:0123456789abcdef0123456789abcdef';

  const search = async (query: string): Promise<SearchBody> => {
    const response = await getJson(registry, `/api/agents/search?${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<SearchBody>();
  };

  before(async () => {
    registry = await startRegistry();
    local = await registerNamed(registry, 'Local Translator', {
      description: 'Translates German letters into English',
      capabilities: [{ type: 'translation' }],
      tags: ['legal'],
    });
    caller = await registerNamed(registry, 'Caller');
    const db = registry.ctx.database.db;
    await ensureSource(db, { id: `a2a:${CARD_URL}`, kind: 'a2a', url: CARD_URL });
    await ensureSource(db, { id: `peer:${PEER}`, kind: 'peer', url: PEER });
    await putRemoteEntry(db, importedCard(`a2a:${CARD_URL}`, 'Contract Translator', 'verified'), 1000);
    await putRemoteEntry(db, importedCard(`a2a:${CARD_URL}#2`, 'Unsigned Translator', 'unsigned'), 1000);
    await putRemoteEntry(db, mirrored(remoteDid, 'Invoice Matcher'), 1000);
  });
  after(() => registry.close());

  test('by default a search is local: the same agents as before, each saying it is registered here', async () => {
    const body = await search('q=translat');
    assert.deepEqual(
      body.agents.map((agent) => agent.name),
      ['Local Translator'],
    );
    assert.equal(body.agents[0]?.home_registry, registry.config.identity.publicUrl);
    assert.deepEqual(body.agents[0]?.provenance, {
      kind: 'registered',
      home_registry: registry.config.identity.publicUrl,
    });
    assert.equal((await search('scope=local&q=translat')).total, 1);
  });

  test('scope=federated searches the remote entries with the same filters, each with its home', async () => {
    const body = await search('scope=federated&q=translat&sort=created_at&order=asc');
    assert.deepEqual(body.agents.map((agent) => agent.name).sort(), [
      'Contract Translator',
      'Local Translator',
      'Unsigned Translator',
    ]);
    const contract = body.agents.find((agent) => agent.name === 'Contract Translator');
    assert.equal(contract?.did, `a2a:${CARD_URL}`, 'an entry without a DID is named by its id');
    assert.equal(contract?.home_registry, CARD_ORIGIN);
    assert.equal(contract?.provenance.kind, 'imported');
    assert.equal(contract?.provenance.verification, 'verified');
    assert.equal(contract?.provenance.kid, 'did:web:cards.example#key-1');
    assert.equal(contract?.reputation_score, 0, 'reputation stays with the registry that holds the reviews');

    const byCapability = await search('scope=federated&capability=invoice_matching');
    assert.deepEqual(
      byCapability.agents.map((agent) => [agent.did, agent.home_registry, agent.provenance.kind]),
      [[remoteDid, PEER, 'mirrored']],
    );
    assert.equal(byCapability.agents[0]?.provenance.checkpoint?.size, 12);
    // Remote entries have no reputation here: a least reputation above 0 leaves them out.
    assert.deepEqual((await search('scope=federated&q=translat&min_reputation=1')).agents, []);
  });

  test('the search page shows where a remote entry comes from and links to its home', async () => {
    const local = await registry.app.inject({ method: 'GET', url: '/?q=translat' });
    assert.equal(local.statusCode, 200);
    assert.doesNotMatch(local.body, /Contract Translator/);
    const page = await registry.app.inject({ method: 'GET', url: '/?q=translat&scope=federated' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Contract Translator/);
    assert.match(
      page.body,
      /Imported from https:\/\/cards\.example\/\.well-known\/agent-card\.json \(A2A agent card; signature verified, did:web:cards\.example\)/,
    );
    assert.match(page.body, /Imported from [^<]*\(A2A agent card; unsigned\)/);
    // An imported card links to the card that describes the agent, not to its host's root.
    assert.match(page.body, /href="https:\/\/cards\.example\/\.well-known\/agent-card\.json"/);
    assert.doesNotMatch(page.body, /href="https:\/\/cards\.example\/?"/);
    const peers = await registry.app.inject({
      method: 'GET',
      url: '/?capability=invoice_matching&scope=federated',
    });
    assert.match(
      peers.body,
      /At its home registry: reputation [\d.]+\/100, rated 8\.5\/10 by 4 reviews \(read /,
    );
    assert.match(
      peers.body,
      /Mirrored from https:\/\/peer\.example \(verified against its registry&#39;s log\)|Mirrored from https:\/\/peer\.example \(verified against its registry/,
    );
    // A mirrored agent links to its own page at its home registry, not to the home page.
    assert.match(peers.body, /href="https:\/\/peer\.example\/agents\/did%3A[^"]+"/);
  });

  test('a federated cursor pages the federated search and is refused by the local one', async () => {
    const first = await search('scope=federated&q=translat&limit=1');
    assert.equal(first.total, 3);
    assert.ok(first.next_cursor !== null);
    const second = await search(`scope=federated&q=translat&limit=1&cursor=${first.next_cursor}`);
    assert.equal(second.agents.length, 1);
    assert.notEqual(second.agents[0]?.name, first.agents[0]?.name);
    const crossed = await getJson(
      registry,
      `/api/agents/search?q=translat&limit=1&cursor=${first.next_cursor}`,
    );
    assert.equal(crossed.statusCode, 400);
    assert.equal(crossed.json().code, 'INVALID_CURSOR');
  });

  test('an entry its source no longer lists leaves the federated search and its page', async () => {
    const db = registry.ctx.database.db;
    const id = `a2a:${CARD_URL}#gone`;
    await putRemoteEntry(db, importedCard(id, 'Ephemeral Translator', 'unsigned'), 2000);
    assert.ok((await search('scope=federated&q=ephemeral')).total === 1);
    assert.equal(
      (await getJson(registry, `/api/federation/entries/${encodeURIComponent(id)}`)).statusCode,
      200,
    );
    assert.equal(await removeRemoteEntries(db, [id], 3000), 1);
    assert.equal((await search('scope=federated&q=ephemeral')).total, 0);
    const gone = await getJson(registry, `/api/federation/entries/${encodeURIComponent(id)}`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'REMOTE_ENTRY_NOT_FOUND');
  });

  test('entries are listed and filtered by verification state; the status shows each source', async () => {
    const verified = await getJson(registry, '/api/federation/entries?verification=verified');
    assert.equal(verified.statusCode, 200, verified.body);
    assert.deepEqual(
      verified.json().entries.map((entry: { name: string }) => entry.name),
      // An imported card verified against its trust root, and a peer's entry verified against its log.
      ['Contract Translator', 'Invoice Matcher'],
    );
    const unsigned = await getJson(registry, '/api/federation/entries?verification=unsigned');
    assert.deepEqual(
      unsigned.json().entries.map((entry: { name: string }) => entry.name),
      ['Unsigned Translator'],
    );
    const mirroredOnly = await getJson(registry, '/api/federation/entries?kind=mirrored');
    assert.deepEqual(
      mirroredOnly.json().entries.map((entry: { did: string }) => entry.did),
      [remoteDid],
    );
    const bad = await getJson(registry, '/api/federation/entries?verification=trusted');
    assert.equal(bad.statusCode, 400);
    const status = await getJson(registry, '/api/federation/status');
    assert.equal(status.statusCode, 200, status.body);
    const sources = status.json().sources as { id: string; state: string; entries: number }[];
    assert.deepEqual(
      sources.map((source) => [source.id, source.state, source.entries]),
      [
        [`a2a:${CARD_URL}`, 'ok', 2],
        [`peer:${PEER}`, 'ok', 1],
      ],
    );
  });

  test('a verification filter reads a bounded number of rows per request and pages on from there', async () => {
    const db = registry.ctx.database.db;
    const rows = Array.from({ length: 5200 }, (_, index) => ({
      ...importedCard(`a2a:bulk#${String(index).padStart(5, '0')}`, `Bulk ${index}`, 'unsigned'),
      source_id: 'a2a:bulk',
      status: 'active' as const,
      created_at: 1,
      updated_at: 1,
      seq: 1_000_000 + index,
    }));
    for (let start = 0; start < rows.length; start += 200)
      await db
        .insertInto('remote_entries')
        .values(rows.slice(start, start + 200))
        .execute();
    await putRemoteEntry(
      db,
      { ...importedCard('a2a:bulk#zzzz', 'Bulk Invalid', 'invalid'), source_id: 'a2a:bulk' },
      9,
    );
    const first = (
      await getJson(registry, '/api/federation/entries?source=a2a:bulk&verification=invalid')
    ).json();
    assert.deepEqual(first.entries, [], 'the first request stopped at its scan bound');
    assert.equal(typeof first.next_after, 'string');
    const second = (
      await getJson(
        registry,
        `/api/federation/entries?source=a2a:bulk&verification=invalid&after=${encodeURIComponent(first.next_after)}`,
      )
    ).json();
    assert.deepEqual(
      second.entries.map((entry: { name: string }) => entry.name),
      ['Bulk Invalid'],
    );
    assert.equal(second.next_after, null);
    await db.deleteFrom('remote_entries').where('source_id', '=', 'a2a:bulk').execute();
  });

  test('invoking a remote agent is a 404 referral naming its home registry, never a forward', async () => {
    const response = await registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: { target_did: remoteDid, capability: 'invoice_matching', input: {} },
    });
    assert.equal(response.statusCode, 404, response.body);
    const body = response.json();
    assert.equal(body.code, 'AGENT_IS_REMOTE');
    assert.equal(body.home_registry, PEER);
    assert.equal(body.invoke_url, `${PEER}/api/invoke`);
    assert.match(body.details, /https:\/\/peer\.example/);
    // A DID no source names is still simply not found.
    const unknown = await registry.app.inject({
      method: 'POST',
      url: '/api/invoke',
      headers: bearer(caller.token),
      payload: {
        target_did: 'did:web:nowhere.example:agent:ffffffffffffffffffffffffffffffff',
        capability: 'x',
        input: {},
      },
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');
  });

  test('the profile and the change feed say each agent is registered here; a remote DID reads as a referral', async () => {
    // The transparency log leaf leaves provenance out (loggedProfile), so the profile can carry it.
    const profile = await getJson(registry, `/api/agents/${encodeURIComponent(local.did)}`);
    assert.equal(profile.statusCode, 200);
    assert.deepEqual(profile.json().provenance, {
      kind: 'registered',
      home_registry: registry.config.identity.publicUrl,
    });
    const remote = await getJson(registry, `/api/agents/${encodeURIComponent(remoteDid)}`);
    assert.equal(remote.statusCode, 404, remote.body);
    assert.equal(remote.json().code, 'AGENT_IS_REMOTE');
    assert.equal(remote.json().home_registry, PEER);
    assert.equal(typeof remote.json().remote_entry, 'string');
    const unknown = await getJson(
      registry,
      `/api/agents/${encodeURIComponent('did:web:nowhere.example:agent:ffffffffffffffffffffffffffffffff')}`,
    );
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'AGENT_NOT_FOUND');
    const feed = await getJson(registry, '/api/agents/changes');
    const changes = feed.json().changes as { did: string; provenance: Provenance }[];
    assert.ok(changes.length >= 2);
    for (const change of changes) assert.equal(change.provenance.kind, 'registered');
    assert.ok(!changes.some((change) => change.did === remoteDid), 'remote entries are never re-published');
  });
});

describe('the federated index is loaded at start when anything is federated', () => {
  const remoteDid = 'did:web:peer.example:agent:fedcba9876543210fedcba9876543210';
  type IndexStatus = { state: string; indexed: number; loaded_at: number | null };
  const indexStatus = async (registry: TestRegistry): Promise<IndexStatus> => {
    const response = await getJson(registry, '/api/federation/status');
    assert.equal(response.statusCode, 200, response.body);
    return response.json<{ search_index: IndexStatus }>().search_index;
  };
  const federatedNames = async (registry: TestRegistry): Promise<string[]> => {
    const response = await getJson(registry, '/api/agents/search?scope=federated&sort=created_at&order=asc');
    assert.equal(response.statusCode, 200, response.body);
    return response.json<SearchBody>().agents.map((agent) => agent.name);
  };

  test('a registry started with remote entries stored loads the index without a search and finds them', async () => {
    const database = await createTestDatabase();
    try {
      const first = await startRegistry({}, { database });
      try {
        await registerNamed(first, 'Local Translator');
        // Nothing federated when it started: the index waits for a first federated search.
        assert.deepEqual(await indexStatus(first), { state: 'idle', indexed: 0, loaded_at: null });
        const db = first.ctx.database.db;
        await ensureSource(db, { id: `peer:${PEER}`, kind: 'peer', url: PEER });
        await putRemoteEntry(db, mirrored(remoteDid, 'Invoice Matcher'), 1000);
      } finally {
        await first.close();
      }

      const second = await startRegistry({}, { database });
      try {
        // No search on this node yet: only the load at start can make the index ready.
        let status = await indexStatus(second);
        for (let tries = 0; status.state !== 'ready' && tries < 600; tries += 1) {
          assert.equal(status.state, 'loading');
          await new Promise((resolve) => setTimeout(resolve, 50));
          status = await indexStatus(second);
        }
        assert.equal(status.state, 'ready');
        assert.equal(status.indexed, 2, 'the local agent and the remote entry');
        assert.equal(typeof status.loaded_at, 'number');
        assert.deepEqual(await federatedNames(second), ['Invoice Matcher', 'Local Translator']);
      } finally {
        await second.close();
      }

      // A federated search sent as the node starts, whatever the load's progress, answers in full.
      const third = await startRegistry({}, { database });
      try {
        assert.deepEqual(await federatedNames(third), ['Invoice Matcher', 'Local Translator']);
        assert.equal((await indexStatus(third)).state, 'ready');
      } finally {
        await third.close();
      }
    } finally {
      await database.drop();
    }
  });
});
