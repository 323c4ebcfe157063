import crypto from 'node:crypto';

export { eip191Digest, recoverEip191Signer } from '@agent-registry/protocol';

const HEX = /^[0-9a-fA-F]+$/;
const strip0x = (hex: string): string => (hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex);

/**
 * Detached Ed25519 signature (hex) over the UTF-8 message. The registry checks with node:crypto
 * (OpenSSL, about 20 times faster than the protocol package's pure-JavaScript check, which a test
 * keeps in agreement with this one), on libuv's thread pool: the check is most of a registration's
 * or a token request's CPU, and off the event loop it runs beside the requests in flight.
 */
export function verifyEd25519(message: string, signatureHex: string, publicKeyHex: string): Promise<boolean> {
  const signature = strip0x(signatureHex);
  if (signature.length !== 128 || !HEX.test(signature)) return Promise.resolve(false);
  const publicKey = crypto.createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') },
    format: 'jwk',
  });
  return new Promise((resolve) => {
    // OpenSSL refuses a key whose point is off the curve: no signature by it is valid.
    crypto.verify(
      null,
      Buffer.from(message, 'utf8'),
      publicKey,
      Buffer.from(signature, 'hex'),
      (error, valid) => resolve(error === null && valid),
    );
  });
}
