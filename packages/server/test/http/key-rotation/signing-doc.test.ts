import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import {
  ed25519PublicKey,
  keyRotationMessage,
  recoverEip191Signer,
  secp256k1PublicKey,
  verifyEd25519,
} from '@agent-registry/protocol';

// docs/signing.md, section "Key rotation and recovery": the worked example is recomputed from its inputs.
const doc = fs.readFileSync(new URL('../../../../../docs/signing.md', import.meta.url), 'utf8');
const block = (name: string): string => {
  const match = new RegExp('```(?:text|json) ' + name + '\\n([\\s\\S]*?)\\n```').exec(doc);
  assert.ok(match, `docs/signing.md has no block "${name}"`);
  return match[1] as string;
};
const tableValue = (label: string): string => {
  const match = new RegExp(`\\| ${label}\\s*\\| \`([^\`]+)\``).exec(doc);
  assert.ok(match, `docs/signing.md has no "${label}" row`);
  return match[1] as string;
};

test('the key rotation example: the protocol package builds its bytes and both signatures verify', () => {
  const edPublic = ed25519PublicKey(tableValue('Ed25519 private key'));
  const secpPublic = secp256k1PublicKey(tableValue('secp256k1 private key'));
  const body = JSON.parse(block('rotation-body')) as Record<string, string | number>;
  const message = keyRotationMessage({
    did: 'did:web:registry.example:agent:0123456789abcdef0123456789abcdef',
    audience: tableValue('registry \\(audience\\)'),
    timestamp: body.timestamp as number,
    new_key_type: 'secp256k1',
    new_public_key: secpPublic,
  });
  assert.equal(message, block('rotation-message'));
  assert.equal(body.signature, block('rotation-signature'));
  assert.equal(body.new_key_signature, block('rotation-new-key-signature'));
  assert.ok(verifyEd25519(message, block('rotation-signature'), edPublic));
  assert.equal(recoverEip191Signer(message, block('rotation-new-key-signature')), secpPublic);
});
