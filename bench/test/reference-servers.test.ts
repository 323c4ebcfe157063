/**
 * The bench's reference servers (baseline-server.ts, fastify-floor-server.ts) answer GET profile with
 * the registry's JSON: the same members in the same order with the same values, provenance included,
 * for agents seeded as the bench seeds them and for every optional path of a profile (missing and
 * present optional fields, each delivery mode, deactivated, did:pkh, reviewed, registered over HTTP).
 * All three over real HTTP on one database: the registry as its own process, the reference servers as
 * the bench starts them. Runs in `npm test` (root `test:bench`), on SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { pkhDid, webDid } from '@agent-registry/protocol';
import {
  createTestDatabase,
  ed25519Agent,
  freePort,
  registrationBody,
  secp256k1Agent,
  startRegistryProcess,
  testDatabase,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { registeredAgentRow } from '@agent-registry/testkit/agent-rows';
import {
  insertAgent,
  loadConfig,
  openDatabase,
  stampAgentChange,
  type NewAgentRow,
} from '@agent-registry/testkit/server-internals';
import { stop, waitForHttp } from '../processes.js';
import { assertSameProfiles, firstDifference, type Origin } from '../reference-answers.js';
import { seedRegistry } from '../seed.js';
import { startReferenceServer } from '../servers.js';

const WEBHOOK_CAPABILITY = {
  type: 'echo',
  description: 'Answers with its input',
  tags: ['test'],
  input_schema: { type: 'object', properties: { n: { type: 'number' } } },
};

/** Rows for every optional path of a profile the seeded corpus may not reach, by what each one shows. */
const variations = (): Record<string, (did: string) => NewAgentRow> => ({
  'every optional field null': (did) =>
    registeredAgentRow(did, { description: null, avatar: null, website: null, tags: '[]' }),
  'every optional field set': (did) =>
    registeredAgentRow(did, {
      description: 'Translates text between languages',
      avatar: 'https://avatars.example.com/a.png',
      website: 'https://agent.example.com',
      capabilities: JSON.stringify([WEBHOOK_CAPABILITY, { type: 'translation', tags: ['en', 'fr'] }]),
      tags: '["language","en"]',
      average_rating: 4.5,
      reputation_score: 71.25,
      total_reviews: 12,
      created_at: 1_700_000_000_000,
      updated_at: 1_700_000_500_000,
    }),
  'invocable by queue': (did) =>
    registeredAgentRow(did, {
      invocation_enabled: 1,
      delivery_mode: 'queue',
      capabilities: '[{"type":"echo"}]',
    }),
  // Without probes: a probed agent is an observed one as soon as the registry probes it.
  'invocable by webhook': (did) => ({
    ...registeredAgentRow(did, {
      invocation_enabled: 1,
      delivery_mode: 'webhook',
      webhook_url: 'https://hooks.example.com/agent',
      webhook_secret: 'a'.repeat(64),
    }),
    webhook_probes: 0,
  }),
  'invocation enabled, no delivery mode': (did) =>
    registeredAgentRow(did, { invocation_enabled: 1, delivery_mode: 'none' }),
  'invocation disabled, queue kept': (did) =>
    registeredAgentRow(did, { invocation_enabled: 0, delivery_mode: 'queue' }),
  deactivated: (did) =>
    registeredAgentRow(did, {
      status: 'deactivated',
      deactivated_at: 1_700_000_900_000,
      invocation_enabled: 1,
      delivery_mode: 'queue',
    }),
  'did:pkh on secp256k1': () => {
    const did = pkhDid('eip155:137', '0x52908400098527886E0F7030069857D2E4169EE7');
    return registeredAgentRow(did, {
      key_type: 'secp256k1',
      public_key: `04${'ab'.repeat(64)}`,
      key_id: `secp256k1:02${'ab'.repeat(32)}`,
      chain_id: 'eip155:137',
    });
  },
});

/** A registry did:web of `domain` (its last segment: 32 hex characters). */
const newWebDid = (domain: string): string => webDid(domain, crypto.randomBytes(16).toString('hex'));

let database: TestDatabase;
let registry: RegistryProcess;
const references: ChildProcess[] = [];
const origins: Origin[] = [];
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-reference-servers-'));
/** Seeded and registered DIDs, each named by the path of the profile it covers. */
const covered = new Map<string, string>();
/** An agent whose workers the registry has seen: the reference servers must refuse it. */
let observedDid = '';

before(async () => {
  database = await createTestDatabase();
  registry = await startRegistryProcess({ DATABASE_URL: database.url });
  const domain = `127.0.0.1%3A${registry.port}`;

  // The bench's own corpus, as `npm run bench` seeds it (reviews, did:pkh, deactivated agents included).
  const config = loadConfig({ DATABASE_URL: database.url });
  const seeded = await seedRegistry({ database: config.database, agents: 300, didWebDomain: domain });
  for (const [index, did] of seeded.dids.entries()) covered.set(did, `seeded agent ${index}`);

  const handle = openDatabase(config.database);
  try {
    await handle.db.transaction().execute(async (trx) => {
      for (const [name, row] of Object.entries(variations())) {
        const made = row(newWebDid(domain));
        await insertAgent(trx, made);
        await stampAgentChange(trx, made.did);
        covered.set(made.did, name);
      }
      observedDid = newWebDid(domain);
      await insertAgent(
        trx,
        registeredAgentRow(observedDid, { invocation_enabled: 1, delivery_mode: 'queue' }),
      );
      await stampAgentChange(trx, observedDid);
      const now = Date.now();
      await sql`insert into agent_presence (did, first_seen_at, last_seen_at, online_since, checked_at)
        values (${observedDid}, ${now}, ${now}, ${now}, ${now})`.execute(trx);
    });
  } finally {
    await handle.close();
  }

  // Registered over HTTP, as a client would: the rows registration itself writes.
  for (const [name, agent] of [
    ['registered over HTTP, Ed25519', ed25519Agent()],
    ['registered over HTTP, secp256k1', secp256k1Agent()],
  ] as const) {
    const body = await registrationBody(
      agent,
      { name: 'Registered', capabilities: [{ type: 'general' }], tags: ['http'] },
      Date.now(),
      { audience: registry.url },
    );
    const response = await fetch(`${registry.url}/api/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { did?: string };
    assert.equal(response.status, 201, `${name}: ${JSON.stringify(json)}`);
    covered.set(json.did as string, name);
  }

  const processLog = path.join(logDir, 'reference-servers.log');
  for (const [file, name] of [
    ['baseline-server.ts', 'the baseline (node:http)'],
    ['fastify-floor-server.ts', 'the Fastify floor'],
  ] as const) {
    const port = await freePort();
    const child = startReferenceServer(file, {
      databaseUrl: database.url,
      port,
      publicUrl: registry.url,
      processLog,
    });
    references.push(child);
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/api/agents/none`, child, 120_000);
    origins.push({ name, base });
  }
});

after(async () => {
  for (const child of references) await stop(child);
  await registry?.stop();
  await database?.drop();
  fs.rmSync(logDir, { recursive: true, force: true });
});

const profilePath = (did: string) => `/api/agents/${encodeURIComponent(did)}`;

test(`the reference servers answer every profile as the registry does (${testDatabase})`, async () => {
  assert.ok(covered.size > 300, 'the corpus and every variation are seeded');
  for (const [did, name] of covered) {
    await assert.doesNotReject(
      assertSameProfiles({ name: 'the registry', base: registry.url }, origins, [profilePath(did)]),
      `${name} (${did})`,
    );
  }
  // The member that rotted once is there, and is the registry's own.
  const [firstDid] = covered.keys();
  const profile = (await (await fetch(`${origins[0]!.base}${profilePath(firstDid!)}`)).json()) as {
    provenance?: unknown;
  };
  assert.deepEqual(profile.provenance, { kind: 'registered', home_registry: registry.url });
});

test('an agent the registry has observed is refused by the reference servers, not answered wrong', async () => {
  const registryAnswer = await fetch(`${registry.url}${profilePath(observedDid)}`);
  assert.equal(registryAnswer.status, 200);
  for (const origin of origins) {
    const answer = await fetch(`${origin.base}${profilePath(observedDid)}`);
    await answer.arrayBuffer();
    assert.equal(answer.status, 500, origin.name);
  }
});

test('an unknown agent is 404 on all three', async () => {
  const unknown = profilePath(newWebDid(`127.0.0.1%3A${registry.port}`));
  for (const base of [registry.url, ...origins.map((origin) => origin.base)]) {
    const answer = await fetch(`${base}${unknown}`);
    await answer.arrayBuffer();
    assert.equal(answer.status, 404, base);
  }
});

test('a difference is named by its member path, member order included', () => {
  assert.equal(firstDifference({ a: 1, b: [1, { c: 2 }] }, { a: 1, b: [1, { c: 2 }] }), undefined);
  assert.deepEqual(firstDifference({ a: 1, p: { kind: 'registered' } }, { a: 1 }), {
    at: 'p',
    expected: { kind: 'registered' },
    actual: undefined,
  });
  assert.deepEqual(firstDifference({ e: [{ url: 'x' }] }, { e: [{ url: 'y' }] }), {
    at: 'e[0].url',
    expected: 'x',
    actual: 'y',
  });
  assert.deepEqual(firstDifference({ a: 1, b: 2 }, { b: 2, a: 1 }), {
    at: '(the whole body) (member order)',
    expected: 'a,b',
    actual: 'b,a',
  });
});
