import { canonicalJson } from '@agent-registry/protocol';
import { decodeProtectedHeader, flattenedVerify, importJWK, type JWK } from 'jose';
import type { ImportVerification } from '../agents/provenance-schemas.js';

export interface CardVerification {
  verification: ImportVerification;
  /** verified: the DID whose key verified a signature, and that key's DID URL. */
  did?: string;
  kid?: string;
  reason?: string;
}

/** The trust root's document for a card: the card domain's did:web document, or why it is not there. */
export type DidDocumentSource = () => Promise<{ document: unknown } | { error: string }>;

/** The did:web DID of an origin: its host, with a port written %3A<port> as the method requires. */
export function didWebOf(origin: URL): string {
  return `did:web:${origin.port === '' ? origin.hostname : `${origin.hostname}%3A${origin.port}`}`;
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
  didDocument: DidDocumentSource,
): Promise<CardVerification> {
  const signatures = card.signatures;
  if (signatures === undefined || (Array.isArray(signatures) && signatures.length === 0))
    return { verification: 'unsigned' };
  if (!Array.isArray(signatures)) return { verification: 'invalid', reason: 'signatures is not an array' };
  const { signatures: _excluded, ...signed } = card;
  const payload = Buffer.from(canonicalJson(signed), 'utf8').toString('base64url');
  const did = didWebOf(cardUrl);
  let resolved: Promise<{ document: unknown } | { error: string }> | undefined;
  const outcomes: Outcome[] = [];
  for (const [index, raw] of signatures.entries()) {
    outcomes.push(
      await checkOne(raw, index, payload, did, () => (resolved ??= didDocument())).catch(
        (error: unknown): Outcome => ({
          kind: 'invalid',
          reason: `signatures[${index}]: ${(error as Error).message}`,
        }),
      ),
    );
  }
  const verified = outcomes.find((outcome) => outcome.kind === 'verified');
  if (verified !== undefined) return { verification: 'verified', did, kid: verified.kid };
  const invalid = outcomes.filter((outcome) => outcome.kind === 'invalid');
  if (invalid.length > 0) return { verification: 'invalid', reason: reasons(invalid) };
  return { verification: 'signed-untrusted', reason: reasons(outcomes) };
}

function reasons(outcomes: Outcome[]): string {
  return outcomes
    .map((outcome) => (outcome.kind === 'verified' ? '' : outcome.reason))
    .join('; ')
    .slice(0, 1000);
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
