import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentKey, RegistryClient } from '@agent-registry/sdk';
import { loadKey } from '@agent-registry/sdk/node';
import {
  ok,
  parseJson,
  runCli,
  startRegistry,
  tempHome,
  type Json,
  type RunningRegistry,
} from './harness.js';

describe('keys rotate and keys recovery against a real registry', () => {
  let registry: RunningRegistry;
  const agent = tempHome();
  const run = (...args: string[]) => runCli(args, { home: agent, env: { AGENT_REGISTRY_URL: registry.url } });
  const keyPath = path.join(agent, 'key.json');

  before(async () => {
    registry = await startRegistry();
    ok(await run('init', '--name', 'Rotator', '--capability', 'general'));
    ok(await run('register'));
  });
  after(async () => {
    await registry.close();
    fs.rmSync(agent, { recursive: true, force: true });
  });

  it('rotates: the DID stays, key.json holds the new key, the old one is kept as .bak', async () => {
    const before = await (await loadKey(keyPath)).publicKey();
    const json = parseJson<Json>(ok(await run('keys', 'rotate', '--key-type', 'secp256k1', '--json')));
    assert.equal(json.key_type, 'secp256k1');
    assert.equal(json.key_generation, 1);
    assert.equal(json.resumed, false);
    assert.equal(await (await loadKey(keyPath)).publicKey(), json.public_key);
    assert.equal(await (await loadKey(String(json.key_backup))).publicKey(), before);
    assert.equal(fs.existsSync(`${keyPath}.rotating`), false);
    // The agent keeps acting with the new key.
    ok(await run('whoami'));
    ok(await run('update'));
  });

  it('resumes a rotation whose answer was lost: the registry has the new key, key.json catches up', async () => {
    const did = String(parseJson<Json>(ok(await run('whoami', '--json'))).did);
    const current = await loadKey(keyPath);
    const next = AgentKey.generateEd25519();
    const client = new RegistryClient({ registry: registry.url, key: current, did });
    const signed = await client.signRotation(next);
    fs.writeFileSync(
      `${keyPath}.rotating`,
      JSON.stringify({
        version: 1,
        registry: client.registry,
        did,
        key_type: 'ed25519',
        chain_id: null,
        private_key: next.exportPrivateKey(),
        signed,
      }),
      { mode: 0o600 },
    );
    await client.rotateKey(next, signed); // the answer the CLI never saw
    const json = parseJson<Json>(ok(await run('keys', 'rotate', '--json')));
    assert.equal(json.resumed, true);
    assert.equal(json.public_key, await next.publicKey());
    assert.equal(await (await loadKey(keyPath)).publicKey(), await next.publicKey());
    ok(await run('update'));
  });

  it('recovery: set a recovery key, start a recovery with it, cancel it with the current key', async () => {
    const recoveryFile = path.join(agent, 'recovery.json');
    const set = parseJson<Json>(ok(await run('keys', 'recovery', 'set', recoveryFile, '--json')));
    assert.equal(set.recovery_key_set, true);
    const did = String(parseJson<Json>(ok(await run('whoami', '--json'))).did);
    const started = parseJson<Json>(
      ok(
        await run(
          'keys',
          'recovery',
          'start',
          did,
          '--recovery-key',
          recoveryFile,
          '--new-key',
          path.join(agent, 'new.json'),
          '--json',
        ),
      ),
    );
    assert.notEqual(started.pending, null);
    const cancelled = parseJson<Json>(ok(await run('keys', 'recovery', 'cancel', '--json')));
    assert.equal(cancelled.pending, null);
  });

  it('recovery finish: refused before the timelock ends, then key.json holds the new key and the agent acts with it', async () => {
    const recoveryFile = path.join(agent, 'recovery.json');
    const did = String(parseJson<Json>(ok(await run('whoami', '--json'))).did);
    const newKey = path.join(agent, 'recovered.json');
    ok(await run('keys', 'recovery', 'start', did, '--recovery-key', recoveryFile, '--new-key', newKey));
    const early = await run('keys', 'recovery', 'finish', did, '--new-key', newKey);
    assert.notEqual(early.code, 0);
    assert.match(early.stderr, /finishes at .*run this again then/);
    // The timelock ends: the registry's clock cannot be moved, so the due time is.
    const database = new Database(registry.databaseFile);
    database.prepare('update key_recovery set pending_due_at = 0 where did = ?').run(did);
    database.close();
    const finished = parseJson<Json>(
      ok(await run('keys', 'recovery', 'finish', did, '--new-key', newKey, '--json')),
    );
    const recovered = await (await loadKey(newKey)).publicKey();
    assert.equal(finished.public_key, recovered);
    assert.equal(await (await loadKey(keyPath)).publicKey(), recovered);
    assert.ok(fs.existsSync(String(finished.key_backup)));
    assert.equal(parseJson<Json>(ok(await run('whoami', '--json'))).did, did);
    ok(await run('update'));
  });
});
