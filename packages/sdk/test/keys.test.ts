import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Wallet } from 'ethers';
import { AgentKey } from '../src/index.js';
import { loadKey, readKeyFile, saveKey } from '../src/node.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-keys-'));

test('an Ed25519 key saves with mode 0600 and loads back signing the same', async () => {
  const dir = tmp();
  const file = path.join(dir, 'nested', 'key.json');
  const key = AgentKey.generateEd25519();
  await saveKey(file, key, { did: 'did:web:x:agent:1', registry: 'http://localhost:8080' });
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
  const loaded = await loadKey(file);
  assert.equal(await loaded.publicKey(), await key.publicKey());
  assert.equal(await loaded.sign('m'), await key.sign('m'));
  assert.equal((await readKeyFile(file)).did, 'did:web:x:agent:1');
  fs.chmodSync(file, 0o644);
  await assert.rejects(loadKey(file), /readable by other users.*chmod 600/);
  fs.rmSync(dir, { recursive: true });
});

test('a secp256k1 key: DID known before registering, signatures those of ethers, file round trip', async () => {
  const wallet = Wallet.createRandom();
  const key = AgentKey.fromSecp256k1(wallet.privateKey, 'eip155:42161');
  assert.equal(await key.did(), `did:pkh:eip155:42161:${wallet.address}`);
  assert.equal(await key.sign('hello'), await wallet.signMessage('hello'));
  const signer = AgentKey.fromEip191Signer(
    { signMessage: (message) => wallet.signMessage(message) },
    'eip155:42161',
  );
  assert.equal(await signer.did(), await key.did());
  assert.throws(() => signer.exportPrivateKey(), /external signer/);
  const dir = tmp();
  const file = path.join(dir, 'key.json');
  await saveKey(file, key);
  const loaded = await loadKey(file);
  assert.equal(await loaded.did(), await key.did());
  fs.rmSync(dir, { recursive: true });
});

test('bad inputs are refused with what to fix', () => {
  assert.throws(() => AgentKey.fromSecp256k1('0x1234', 'eip155:1'), /64 hex characters/);
  assert.throws(() => AgentKey.fromSecp256k1(Wallet.createRandom().privateKey, 'ethereum'), /CAIP-2/);
  assert.throws(() => AgentKey.fromEip191Signer({} as never, 'eip155:1'), /signMessage/);
});
