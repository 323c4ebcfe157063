import crypto, { type KeyObject } from 'node:crypto';

/**
 * An Ed25519 private key given in a setting, as PKCS#8 PEM (newlines may be written `\n`) or a private
 * JWK; the error names the setting.
 */
export function parseEd25519PrivateKey(value: string, setting: string): KeyObject {
  let key: KeyObject;
  try {
    key = value.startsWith('{')
      ? crypto.createPrivateKey({ key: JSON.parse(value) as crypto.JsonWebKey, format: 'jwk' })
      : crypto.createPrivateKey(value.replace(/\\n/g, '\n'));
  } catch (error) {
    throw new Error(`${setting} is neither a PKCS#8 PEM nor a private JWK`, { cause: error });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`${setting} must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  return key;
}
