import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AgentKey, RegistryClient, RegistryError } from '../src/index.js';
import { createTestDatabase, type RegistryProcess, type TestDatabase } from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

describe('RegistryClient key rotation and recovery against a real registry', () => {
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

  test('rotateKey keeps the DID, switches the client to the new key and token; a resent signed rotation is refused once done', async () => {
    const client = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    const { did, token: oldToken } = await client.register({
      name: 'SDK Rotating Agent',
      capabilities: [{ type: 'general' }],
    });
    const next = AgentKey.fromSecp256k1(AgentKey.generateEd25519().exportPrivateKey(), 'eip155:1');
    const signed = await client.signRotation(next);
    const result = await client.rotateKey(next, signed);
    assert.equal(result.did, did);
    assert.equal(result.key_type, 'secp256k1');
    assert.equal(client.key, next);
    assert.equal((await client.getAgent(did)).public_key, await next.publicKey());
    // The client keeps working with the new key; the old token is refused.
    assert.equal((await client.updateAgent({ description: 'rotated' })).description, 'rotated');
    const stale = new RegistryClient({ registry: registry.url, token: oldToken });
    await assert.rejects(stale.updateAgent({ description: 'old' }), (error: unknown) => {
      return error instanceof RegistryError && error.code === 'TOKEN_KEY_ROTATED';
    });
    await assert.rejects(client.rotateKey(AgentKey.generateEd25519(), signed), RegistryError);

    // Recovery: set by the current key, started by the recovery key, cancelled by the current key.
    const recovery = AgentKey.generateEd25519();
    assert.equal((await client.setRecoveryKey(recovery)).recovery_key_set, true);
    const stranger = new RegistryClient({ registry: registry.url });
    const started = await stranger.startRecovery(recovery, AgentKey.generateEd25519(), did);
    assert.ok(started.pending !== null && started.pending.completes_at > Date.now());
    assert.equal((await client.cancelRecovery()).pending, null);
    assert.equal((await client.getKeyRecovery()).pending, null);
  });
});
