import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { Wallet, verifyMessage } from 'ethers';
import {
  authenticationMessage,
  ed25519PublicKey,
  parsePublicKey,
  recoverEip191Signer,
  registrationMessage,
  registrationMessages,
  registryAudience,
  secp256k1PublicKey,
  signEd25519,
  signEip191,
  verifyEd25519,
} from '../src/index.js';

const profile = {
  name: 'Translator',
  capabilities: [{ type: 'translation', description: 'English to French' }],
};

describe('message builders', () => {
  test('Ed25519 registration: canonical JSON, explicit nulls, audience sorted in when present', () => {
    const input = { public_key: 'ab', timestamp: 1, profile };
    assert.equal(
      registrationMessage('ed25519', input),
      '{"key_type":"ed25519","profile":{"avatar":null,"capabilities":[{"description":"English to French","type":"translation"}],"description":null,"name":"Translator","tags":[],"website":null},"public_key":"ab","purpose":"registration","timestamp":1}',
    );
    assert.equal(
      registrationMessage('ed25519', { ...input, audience: 'https://r.example' }),
      '{"audience":"https://r.example","key_type":"ed25519","profile":{"avatar":null,"capabilities":[{"description":"English to French","type":"translation"}],"description":null,"name":"Translator","tags":[],"website":null},"public_key":"ab","purpose":"registration","timestamp":1}',
    );
  });

  test('secp256k1 registration: fixed member order, audience last, the signed text is among the accepted ones', () => {
    const input = {
      public_key: '02ab',
      chain_id: 'eip155:1',
      timestamp: 1,
      profile,
      audience: 'https://r.example',
    };
    const text = registrationMessage('secp256k1', input);
    assert.equal(
      text,
      '{"purpose":"registration","public_key":"02ab","key_type":"secp256k1","chain_id":"eip155:1","profile":{"name":"Translator","description":null,"avatar":null,"website":null,"capabilities":[{"type":"translation","description":"English to French","tags":[]}],"tags":[]},"timestamp":1,"audience":"https://r.example"}',
    );
    assert.ok(registrationMessages('secp256k1', input).includes(text));
  });

  test('authentication message for both key types', () => {
    const input = { did: 'did:x', audience: 'http://localhost:8080', timestamp: 5 };
    assert.equal(
      authenticationMessage('ed25519', input),
      '{"audience":"http://localhost:8080","did":"did:x","purpose":"authenticate","timestamp":5}',
    );
    assert.equal(
      authenticationMessage('secp256k1', input),
      '{"purpose":"authenticate","did":"did:x","audience":"http://localhost:8080","timestamp":5}',
    );
  });

  test('registryAudience is the origin', () => {
    assert.equal(registryAudience('https://Registry.Example:443/some/path/'), 'https://registry.example');
    assert.equal(registryAudience('http://localhost:8080/'), 'http://localhost:8080');
    assert.throws(() => registryAudience('ftp://x'), /http or https/);
  });
});

describe('signing agrees with node:crypto and ethers', () => {
  test('Ed25519 signatures are those of node:crypto and verify both ways', () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url').toString('hex');
    const publicHex = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString(
      'hex',
    );
    assert.equal(ed25519PublicKey(seed), publicHex);
    const message = 'héllo {"a":1}';
    const ours = signEd25519(message, seed);
    assert.equal(ours, crypto.sign(null, Buffer.from(message), privateKey).toString('hex'));
    assert.ok(verifyEd25519(message, ours, publicHex));
    assert.ok(!verifyEd25519(`${message} `, ours, publicHex));
  });

  test('EIP-191 signatures are those of an ethers Wallet and recover to the key', async () => {
    const wallet = Wallet.createRandom();
    const message = '{"purpose":"authenticate","did":"did:x"}';
    const ours = signEip191(message, wallet.privateKey);
    assert.equal(ours, await wallet.signMessage(message));
    assert.equal(verifyMessage(message, ours), wallet.address);
    const compressed = secp256k1PublicKey(wallet.privateKey);
    assert.equal(compressed, wallet.signingKey.compressedPublicKey.slice(2));
    assert.equal(recoverEip191Signer(message, ours), compressed);
    assert.equal(parsePublicKey('secp256k1', compressed).address, wallet.address);
  });
});
