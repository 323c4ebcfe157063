import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { authenticationMessage, registrationMessage, type ProfileInput } from '@agent-registry/protocol';
import { Wallet } from 'ethers';
import { verifyEd25519 } from '../../../src/modules/identity/signatures.js';
import { SIGNING_DOC } from '../../../src/modules/identity/signature-proof.js';
import { referenceCanonicalJson } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

// docs/signing.md is a contract with every client author: recompute each example from its inputs with
// node:crypto and ethers, check the protocol package builds the same bytes, and send every request
// body to a real registry whose PUBLIC_URL and clock are the document's.
const doc = fs.readFileSync(new URL('../../../../../docs/signing.md', import.meta.url), 'utf8');

const blocks = new Map<string, string>();
for (const match of doc.matchAll(/```(?:text|json) ([a-z0-9-]+(?::[a-z]+)?)\n([\s\S]*?)\n```/g)) {
  blocks.set(match[1] as string, match[2] as string);
}
const block = (name: string): string => {
  const text = blocks.get(name);
  assert.ok(text !== undefined, `docs/signing.md has no block "${name}"`);
  return text;
};
const tableValue = (label: string): string => {
  const match = new RegExp(`\\| ${label}\\s*\\| \`([^\`]+)\``).exec(doc);
  assert.ok(match, `docs/signing.md has no "${label}" row`);
  return match[1] as string;
};

const AUDIENCE = tableValue('registry \\(audience\\)');
const ed25519Seed = tableValue('Ed25519 private key');
const wallet = new Wallet(tableValue('secp256k1 private key'));
const ed25519PrivateKey = crypto.createPrivateKey({
  key: Buffer.concat([
    Buffer.from('302e020100300506032b657004220420', 'hex'),
    Buffer.from(ed25519Seed, 'hex'),
  ]),
  format: 'der',
  type: 'pkcs8',
});
const ed25519PublicKey = Buffer.from(
  crypto.createPublicKey(ed25519PrivateKey).export({ format: 'jwk' }).x as string,
  'base64url',
).toString('hex');

interface RegistrationBody {
  public_key: string;
  key_type: 'ed25519' | 'secp256k1';
  chain_id?: string;
  profile: ProfileInput;
  timestamp: number;
  signature: string;
  audience?: string;
}

/** The rules of docs/signing.md, written out here independently of the protocol package. */
function referenceRegistrationMessage(body: RegistrationBody): string {
  const { profile } = body;
  if (body.key_type === 'ed25519') {
    return referenceCanonicalJson({
      audience: body.audience,
      key_type: 'ed25519',
      profile: {
        avatar: profile.avatar ?? null,
        capabilities: profile.capabilities,
        description: profile.description ?? null,
        name: profile.name,
        tags: profile.tags ?? [],
        website: profile.website ?? null,
      },
      public_key: body.public_key,
      purpose: 'registration',
      timestamp: body.timestamp,
    });
  }
  return JSON.stringify({
    purpose: 'registration',
    public_key: body.public_key,
    key_type: 'secp256k1',
    chain_id: body.chain_id,
    profile: {
      name: profile.name,
      description: profile.description ?? null,
      avatar: profile.avatar ?? null,
      website: profile.website ?? null,
      capabilities: profile.capabilities.map((capability) => ({
        type: capability.type,
        description: capability.description ?? null,
        tags: capability.tags ?? [],
      })),
      tags: profile.tags ?? [],
    },
    timestamp: body.timestamp,
    audience: body.audience,
  });
}

const sign = async (keyType: 'ed25519' | 'secp256k1', message: string): Promise<string> =>
  keyType === 'ed25519'
    ? crypto.sign(null, Buffer.from(message, 'utf8'), ed25519PrivateKey).toString('hex')
    : wallet.signMessage(message);

describe('docs/signing.md: every worked example recomputes and is accepted by the registry', () => {
  let bound: TestRegistry;
  let unbound: TestRegistry;
  before(async () => {
    bound = await startRegistry({ PUBLIC_URL: AUDIENCE });
    unbound = await startRegistry({ PUBLIC_URL: AUDIENCE });
  });
  after(async () => {
    await bound.close();
    await unbound.close();
  });

  const at = (registry: TestRegistry, timestamp: number) =>
    registry.clock.advance(timestamp - registry.clock.now());

  test('every section an error message names exists in the document', () => {
    for (const pointer of [...Object.values(SIGNING_DOC), 'docs/signing.md, section "Audience"']) {
      const section = /section "([^"]+)"/.exec(pointer)?.[1];
      assert.ok(section !== undefined && doc.includes(`\n## ${section}\n`), `no section "${section}"`);
    }
  });

  test('the OpenAPI descriptions of register and /api/auth/token point to the document', async () => {
    const openapi = (await bound.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, { post: { description?: string } }>;
    }>();
    for (const path of ['/api/agents/register', '/api/auth/token']) {
      assert.match(openapi.paths[path]?.post.description ?? '', /docs\/signing\.md/, path);
    }
  });

  test('the fixed keys of the table are the ones the examples use', () => {
    assert.equal(tableValue('Ed25519 public key'), ed25519PublicKey);
    assert.equal(tableValue('secp256k1 public key'), wallet.signingKey.compressedPublicKey.slice(2));
    assert.equal(tableValue('secp256k1 address'), wallet.address);
    assert.deepEqual(JSON.parse(block('profile')), JSON.parse(block('ed25519-registration:body')).profile);
  });

  for (const name of [
    'ed25519-registration',
    'ed25519-registration-unbound',
    'secp256k1-registration',
    'secp256k1-registration-unbound',
  ]) {
    test(name, async () => {
      const body = JSON.parse(block(`${name}:body`)) as RegistrationBody;
      const message = block(`${name}:message`);
      assert.equal(referenceRegistrationMessage(body), message, 'the message follows the written rules');
      assert.equal(
        registrationMessage(body.key_type, { ...body, chain_id: body.chain_id ?? null }),
        message,
        'the protocol package builds the same bytes',
      );
      assert.equal(body.audience !== undefined, !name.endsWith('-unbound'));
      if (body.key_type === 'ed25519') assert.equal(body.public_key, ed25519PublicKey);
      else assert.equal(body.public_key, wallet.signingKey.compressedPublicKey.slice(2));
      const signature = await sign(body.key_type, message);
      assert.equal(block(`${name}:signature`), signature);
      assert.equal(body.signature, signature);

      const registry = name.endsWith('-unbound') ? unbound : bound;
      at(registry, body.timestamp);
      const response = await registry.app.inject({
        method: 'POST',
        url: '/api/agents/register',
        payload: body,
      });
      assert.equal(response.statusCode, 201, response.body);
      const { did } = response.json<{ did: string }>();
      if (body.key_type === 'ed25519') assert.match(did, /^did:web:registry\.example:agent:[0-9a-f]{32}$/);
      else assert.equal(did, `did:pkh:eip155:1:${wallet.address}`);
    });
  }

  for (const keyType of ['ed25519', 'secp256k1'] as const) {
    const name = `${keyType}-authentication`;
    test(name, async () => {
      const body = JSON.parse(block(`${name}:body`)) as { did: string; timestamp: number; signature: string };
      const message = block(`${name}:message`);
      const reference =
        keyType === 'ed25519'
          ? referenceCanonicalJson({
              audience: AUDIENCE,
              did: body.did,
              purpose: 'authenticate',
              timestamp: body.timestamp,
            })
          : JSON.stringify({
              purpose: 'authenticate',
              did: body.did,
              audience: AUDIENCE,
              timestamp: body.timestamp,
            });
      assert.equal(reference, message);
      assert.equal(
        authenticationMessage(keyType, { did: body.did, audience: AUDIENCE, timestamp: body.timestamp }),
        message,
      );
      const signature = await sign(keyType, message);
      assert.equal(block(`${name}:signature`), signature);
      assert.equal(body.signature, signature);
      if (keyType === 'ed25519') {
        // A did:web's id is chosen by the registry, so the document's DID exists on no registry:
        // check the signature the way the registry does.
        assert.ok(await verifyEd25519(message, body.signature, ed25519PublicKey));
        return;
      }
      at(bound, body.timestamp);
      const response = await bound.app.inject({ method: 'POST', url: '/api/auth/token', payload: body });
      assert.equal(response.statusCode, 200, response.body);
    });
  }
});
