import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import util from 'node:util';
import { Wallet } from 'ethers';
import { AgentKey, RegistryClient } from '../src/index.js';
import { KeyFileExistsError, loadKey, readKeyFile, saveKey } from '../src/node.js';

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

test('saveKey never replaces an existing key unless told to, and then keeps a backup', async () => {
  const dir = tmp();
  const file = path.join(dir, 'key.json');
  const first = AgentKey.generateEd25519();
  await saveKey(file, first);
  const original = fs.readFileSync(file, 'utf8');
  const second = AgentKey.generateEd25519();
  await assert.rejects(
    saveKey(file, second),
    (error: unknown) =>
      error instanceof KeyFileExistsError &&
      error.code === 'KEY_EXISTS' &&
      error.file === file &&
      /already holds a key.*overwrite: true/s.test(error.message),
  );
  assert.equal(fs.readFileSync(file, 'utf8'), original, 'the first key is untouched');
  assert.equal(await (await loadKey(file)).publicKey(), await first.publicKey());

  await saveKey(file, second, { overwrite: true });
  assert.equal(await (await loadKey(file)).publicKey(), await second.publicKey());
  const backups = fs.readdirSync(dir).filter((name) => /^key\.json\.\d+\.bak$/.test(name));
  assert.equal(backups.length, 1, fs.readdirSync(dir).join(', '));
  const backup = path.join(dir, backups[0] as string);
  assert.equal(fs.readFileSync(backup, 'utf8'), original);
  assert.equal(fs.statSync(backup).mode & 0o777, 0o600);
  fs.rmSync(dir, { recursive: true });
});

test('logging, inspecting, serialising, spreading or cloning a key or a client never shows the private key or token', async () => {
  const key = AgentKey.generateEd25519();
  const secret = key.exportPrivateKey();
  const wallet = Wallet.createRandom();
  const secp = AgentKey.fromSecp256k1(wallet.privateKey, 'eip155:1');
  const secpSecret = secp.exportPrivateKey();
  const token = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJkaWQ6d2ViOng6YWdlbnQ6MSJ9.c2lnbmF0dXJl';
  const client = new RegistryClient({ registry: 'http://localhost:8080', key, token });
  for (const [what, value, hidden] of [
    ['an Ed25519 key', key, secret],
    ['a secp256k1 key', secp, secpSecret.replace(/^0x/, '')],
    ['a client', client, secret],
  ] as const) {
    const shown = [
      util.inspect(value),
      util.inspect(value, { showHidden: true, depth: Infinity }),
      util.format('%o', value),
      util.format('%O', value),
      util.format('%j', value),
      util.format('%s', value),
      JSON.stringify(value),
      JSON.stringify({ nested: { value } }),
      util.inspect({ ...value }),
      JSON.stringify({ ...value }),
      String(value),
    ];
    if (value !== client) shown.push(util.inspect(structuredClone(value)));
    for (const text of shown) {
      assert.ok(
        !text.toLowerCase().includes(hidden.toLowerCase()),
        `${what} leaked its private key: ${text}`,
      );
      assert.ok(!text.includes(token), `${what} leaked the token: ${text}`);
    }
  }
  assert.match(util.inspect(key), /AgentKey .*"keyType":"ed25519".*\[redacted\]/);
  assert.match(util.inspect(client), /RegistryClient .*"did":"did:web:x:agent:1".*"token":"\[redacted\]"/);
  // What the key is for still works.
  assert.equal(client.token, token);
  assert.equal(key.exportPrivateKey(), secret);
  assert.equal(await AgentKey.fromEd25519(secret).publicKey(), await key.publicKey());
});
