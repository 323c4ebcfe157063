import { canonicalJson } from '@agent-registry/protocol';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
  flattenedVerify,
  importJWK,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import type { ImportVerification } from '../agents/provenance-schemas.js';
import { MAX_CARD_DEPTH, nestedDeeperThan } from './a2a-card.js';

export interface CardVerification {
  verification: ImportVerification;
  /** verified: the DID whose key verified a signature, and that key's DID URL. */
  did?: string;
  kid?: string;
  reason?: string;
}

/** The trust root's document for a card: the card domain's did:web document, or why it is not there. */
export type DidDocumentSource = () => Promise<{ document: unknown } | { error: string }>;

/**
 * Where a card's keys come from: the card domain's did:web document, or the JWKS the operator pinned
 * for the card's origin (FEDERATION_A2A_JWKS; `where` names it in reasons). Never the card itself.
 */
export type TrustRoot =
  { kind: 'did-web'; document: DidDocumentSource } | { kind: 'jwks'; where: string; keys: DidDocumentSource };

/** The did:web DID of an origin: its host, with a port written %3A<port> as the method requires. */
export function didWebOf(origin: URL): string {
  return `did:web:${origin.port === '' ? origin.hostname : `${origin.hostname}%3A${origin.port}`}`;
}

/**
 * The most signatures of one card that are checked. A card has one, or a few while its keys rotate;
 * each check may cost a public-key operation, so a card cannot buy more than this many.
 */
export const MAX_CARD_SIGNATURES_CHECKED = 5;

/**
 * The largest RSA public exponent accepted, in bits. Verifying costs one modular multiplication per
 * bit of `e`, and jose checks only the modulus: an exponent as long as the modulus makes every
 * signature check as dear as a private-key operation. Keys in use have 3 or 65537, and 32 bits is the
 * bound other verifiers set, so no real key is refused (docs/decisions/federation.md, "Bounded card signature
 * checks").
 */
export const MAX_RSA_PUBLIC_EXPONENT_BITS = 32;

/** Why an RSA JWK's public exponent is refused, or undefined for a usable one (and for other key types). */
export function rsaExponentProblem(jwk: unknown): string | undefined {
  const key = jwk as { kty?: unknown; e?: unknown } | null;
  if (typeof key !== 'object' || key === null || key.kty !== 'RSA') return undefined;
  if (typeof key.e !== 'string' || !/^[A-Za-z0-9_-]+$/.test(key.e))
    return 'its RSA public exponent e is not base64url';
  const bytes = Buffer.from(key.e, 'base64url');
  const first = bytes.findIndex((byte) => byte !== 0);
  const bits = first === -1 ? 0 : (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first] ?? 0));
  if (bits > MAX_RSA_PUBLIC_EXPONENT_BITS)
    return `its RSA public exponent e has ${bits} bits, more than ${MAX_RSA_PUBLIC_EXPONENT_BITS} (keys in use have 65537): refused`;
  if (bits < 2 || ((bytes.at(-1) ?? 0) & 1) === 0)
    return 'its RSA public exponent e is not an odd number of at least 3: refused';
  return undefined;
}

interface VerificationMethod {
  id?: unknown;
  controller?: unknown;
  publicKeyJwk?: unknown;
}

type Outcome =
  | { kind: 'verified'; kid: string }
  | { kind: 'invalid'; reason: string }
  | { kind: 'untrusted'; reason: string };

/**
 * A2A v1.0 section 8.4 against this registry's trust root (docs/federation.md, "Verifying an A2A card"):
 * each JWS of `signatures` (RFC 7515, flattened: protected, signature, optional header) is checked over
 * the RFC 8785 canonical JSON of the card as served without `signatures`, with a key found only in the
 * card domain's did:web document: the protected header's `kid` must be a DID URL of that DID, the key a
 * verificationMethod of the document with a publicKeyJwk, and referenced by its assertionMethod. `jku`,
 * and anything in the unprotected header, is never a key source: a card cannot name its own trust root.
 */
export async function verifyCardSignatures(
  card: Record<string, unknown>,
  cardUrl: URL,
  root: TrustRoot,
): Promise<CardVerification> {
  const signatures = card.signatures;
  if (signatures === undefined || (Array.isArray(signatures) && signatures.length === 0))
    return { verification: 'unsigned' };
  if (!Array.isArray(signatures)) return { verification: 'invalid', reason: 'signatures is not an array' };
  // Canonical JSON recurses: a card too deep for it is refused here too, not left to overflow the stack.
  if (nestedDeeperThan(card, MAX_CARD_DEPTH))
    return { verification: 'invalid', reason: `the card nests more than ${MAX_CARD_DEPTH} levels deep` };
  const { signatures: _excluded, ...signed } = card;
  const payload = Buffer.from(canonicalJson(signed), 'utf8').toString('base64url');
  const did = didWebOf(cardUrl);
  let resolved: Promise<{ document: unknown } | { error: string }> | undefined;
  const once = () => (resolved ??= root.kind === 'jwks' ? root.keys() : root.document());
  const outcomes: Outcome[] = [];
  for (const [index, raw] of signatures.slice(0, MAX_CARD_SIGNATURES_CHECKED).entries()) {
    outcomes.push(
      await (
        root.kind === 'jwks'
          ? checkOneWithJwks(raw, index, payload, root.where, once)
          : checkOne(raw, index, payload, did, once)
      ).catch((error: unknown): Outcome => ({
        kind: 'invalid',
        reason: `signatures[${index}]: ${(error as Error).message}`,
      })),
    );
  }
  const unchecked =
    signatures.length > MAX_CARD_SIGNATURES_CHECKED
      ? `; ${signatures.length - MAX_CARD_SIGNATURES_CHECKED} signatures after the first ${MAX_CARD_SIGNATURES_CHECKED} were not checked (at most ${MAX_CARD_SIGNATURES_CHECKED} per card)`
      : '';
  const verified = outcomes.find((outcome) => outcome.kind === 'verified');
  if (verified !== undefined)
    return root.kind === 'jwks'
      ? { verification: 'verified', kid: verified.kid }
      : { verification: 'verified', did, kid: verified.kid };
  const invalid = outcomes.filter((outcome) => outcome.kind === 'invalid');
  if (invalid.length > 0) return { verification: 'invalid', reason: reasons(invalid, unchecked) };
  return { verification: 'signed-untrusted', reason: reasons(outcomes, unchecked) };
}

/** The outcomes' reasons, cut to fit, then what was not checked (never cut away). */
function reasons(outcomes: Outcome[], unchecked: string): string {
  const listed = outcomes
    .map((outcome) => (outcome.kind === 'verified' ? '' : outcome.reason))
    .join('; ')
    .slice(0, 1000 - unchecked.length);
  return `${listed}${unchecked}`;
}

/** The flattened JWS members and protected header of one signature, or why it is malformed. */
function readJws(
  raw: unknown,
  where: string,
):
  | { jws: { protected: string; signature: string }; header: ReturnType<typeof decodeProtectedHeader> }
  | { invalid: string } {
  if (typeof raw !== 'object' || raw === null) return { invalid: `${where} is not an object` };
  const jws = raw as { protected?: unknown; signature?: unknown };
  if (typeof jws.protected !== 'string' || typeof jws.signature !== 'string')
    return { invalid: `${where} needs protected and signature strings (RFC 7515 flattened JWS)` };
  try {
    const header = decodeProtectedHeader({ protected: jws.protected });
    return { jws: { protected: jws.protected, signature: jws.signature }, header };
  } catch {
    return { invalid: `${where}: protected is not a base64url JSON header` };
  }
}

/**
 * One signature against the JWKS the operator pinned for the card's origin: the protected header's
 * `kid` must name a key of that set (jose's local JWK set picks it by kid and alg). As with did:web, a
 * `jku` or anything unprotected is never a key source.
 */
async function checkOneWithJwks(
  raw: unknown,
  index: number,
  payload: string,
  where: string,
  jwks: DidDocumentSource,
): Promise<Outcome> {
  const at = `signatures[${index}]`;
  const read = readJws(raw, at);
  if ('invalid' in read) return { kind: 'invalid', reason: read.invalid };
  const { jws, header } = read;
  if (typeof header.alg !== 'string')
    return { kind: 'invalid', reason: `${at}: the protected header has no alg` };
  const jkuNote =
    typeof header.jku === 'string'
      ? ` (its jku ${header.jku} is not a trust root: keys come from ${where})`
      : '';
  if (typeof header.kid !== 'string')
    return {
      kind: 'untrusted',
      reason: `${at}: no kid, so no key of the pinned JWKS ${where} is named${jkuNote}`,
    };
  const found = await jwks();
  if ('error' in found) return { kind: 'untrusted', reason: `${at}: ${found.error}` };
  const set = found.document as JSONWebKeySet;
  if (typeof set !== 'object' || set === null || !Array.isArray(set.keys))
    return { kind: 'untrusted', reason: `${at}: the pinned JWKS ${where} is not a JWK set (no keys array)` };
  for (const candidate of set.keys.filter((jwk) => (jwk as { kid?: unknown } | null)?.kid === header.kid)) {
    const problem = rsaExponentProblem(candidate);
    if (problem !== undefined)
      return { kind: 'invalid', reason: `${at}: ${header.kid} of the pinned JWKS ${where}: ${problem}` };
  }
  try {
    await flattenedVerify({ ...jws, payload }, createLocalJWKSet(set));
  } catch (error) {
    if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys)
      return {
        kind: 'untrusted',
        reason: `${at}: kid ${JSON.stringify(header.kid)} is not one key of the pinned JWKS ${where}${jkuNote}`,
      };
    if (error instanceof joseErrors.JWSSignatureVerificationFailed)
      return {
        kind: 'invalid',
        reason: `${at}: the signature by ${header.kid} does not verify over the card's RFC 8785 canonical JSON without signatures`,
      };
    return { kind: 'invalid', reason: `${at}: ${(error as Error).message}` };
  }
  return { kind: 'verified', kid: header.kid };
}

async function checkOne(
  raw: unknown,
  index: number,
  payload: string,
  did: string,
  didDocument: DidDocumentSource,
): Promise<Outcome> {
  const where = `signatures[${index}]`;
  if (typeof raw !== 'object' || raw === null)
    return { kind: 'invalid', reason: `${where} is not an object` };
  const jws = raw as { protected?: unknown; signature?: unknown; header?: unknown };
  if (typeof jws.protected !== 'string' || typeof jws.signature !== 'string')
    return {
      kind: 'invalid',
      reason: `${where} needs protected and signature strings (RFC 7515 flattened JWS)`,
    };
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader({ protected: jws.protected });
  } catch {
    return { kind: 'invalid', reason: `${where}: protected is not a base64url JSON header` };
  }
  const kid = header.kid;
  const alg = header.alg;
  if (typeof alg !== 'string')
    return { kind: 'invalid', reason: `${where}: the protected header has no alg` };
  const jkuNote =
    typeof header.jku === 'string'
      ? ` (its jku ${header.jku} is not a trust root: keys come from ${did})`
      : '';
  if (typeof kid !== 'string' || !kid.startsWith(`${did}#`))
    return {
      kind: 'untrusted',
      reason: `${where}: kid ${JSON.stringify(kid ?? null)} is not a key of ${did}, the card domain's did:web${jkuNote}`,
    };
  const found = await didDocument();
  if ('error' in found) return { kind: 'untrusted', reason: `${where}: ${found.error}` };
  const document = found.document as {
    id?: unknown;
    verificationMethod?: unknown;
    assertionMethod?: unknown;
  };
  if (typeof document !== 'object' || document === null || document.id !== did)
    return { kind: 'untrusted', reason: `${where}: did.json is not the document of ${did} (its id differs)` };
  const fragment = kid.slice(did.length);
  const named = (id: unknown): boolean => id === kid || id === fragment;
  const methods = Array.isArray(document.verificationMethod)
    ? (document.verificationMethod as VerificationMethod[])
    : [];
  const assertion = Array.isArray(document.assertionMethod) ? (document.assertionMethod as unknown[]) : [];
  const embedded = assertion.find(
    (entry): entry is VerificationMethod =>
      typeof entry === 'object' && entry !== null && named((entry as VerificationMethod).id),
  );
  const method = embedded ?? methods.find((entry) => named(entry.id));
  if (method === undefined)
    return { kind: 'untrusted', reason: `${where}: ${did}'s did.json has no verificationMethod ${kid}` };
  if (embedded === undefined && !assertion.some((entry) => typeof entry === 'string' && named(entry)))
    return {
      kind: 'untrusted',
      reason: `${where}: ${kid} is in did.json but not in its assertionMethod, so it may not sign for ${did}: refused`,
    };
  if (typeof method.publicKeyJwk !== 'object' || method.publicKeyJwk === null)
    return { kind: 'untrusted', reason: `${where}: ${kid} has no publicKeyJwk` };
  const exponent = rsaExponentProblem(method.publicKeyJwk);
  if (exponent !== undefined) return { kind: 'invalid', reason: `${where}: ${kid}: ${exponent}` };
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(method.publicKeyJwk as JWK, alg);
  } catch (error) {
    return { kind: 'invalid', reason: `${where}: ${kid} cannot verify ${alg}: ${(error as Error).message}` };
  }
  try {
    await flattenedVerify({ protected: jws.protected, payload, signature: jws.signature }, key);
  } catch {
    return {
      kind: 'invalid',
      reason: `${where}: the signature by ${kid} does not verify over the card's RFC 8785 canonical JSON without signatures`,
    };
  }
  return { kind: 'verified', kid };
}
