import { DidFormatError, parseDid, webDid } from '@agent-registry/protocol';
import { BadRequestError, NotFoundError } from '../../kernel/errors.js';

/** The ARD identifier pattern (ard-spec's ai-catalog.schema.json), with the NID matched case-insensitively. */
const ARD_URN = /^urn:air:([a-zA-Z0-9.-]+)((?::[a-zA-Z0-9._-]+)+)$/i;
/** The namespace this registry publishes its agents under: urn:air:<host>:agents:<name>. */
export const AGENTS_NAMESPACE = 'agents';
const WEB_AGENT_ID = /^[0-9a-f]{32}$/i;
/** Longer than any URN this registry writes (a did:pkh one is about 90 characters). */
export const URN_MAX_LENGTH = 256;

/**
 * The `<publisher>` of every URN this registry writes: PUBLIC_URL's host name, without the port, which
 * an ARD publisher segment (a domain name) cannot carry.
 */
export function ardPublisher(publicUrl: string): string {
  return new URL(publicUrl).hostname.toLowerCase();
}

/**
 * An agent's URN from its DID (docs/ard.md): a registry did:web keeps its 32-hex agent id as the name;
 * a did:pkh keeps its method-specific id, whose colons become URN segments.
 */
export function didToUrn(did: string, publisher: string): string {
  const parts = did.split(':');
  if (parts[1] === 'web') return `urn:air:${publisher}:${AGENTS_NAMESPACE}:${parts.at(-1) ?? ''}`;
  return `urn:air:${publisher}:${AGENTS_NAMESPACE}:${parts.slice(1).join(':')}`;
}

/**
 * The DID an ARD identifier names, in its canonical spelling. A malformed identifier is a 400; one of
 * another publisher, or outside the agents namespace, is a 404: this registry publishes no such entry.
 */
export function urnToDid(identifier: string, publisher: string, didWebDomain: string): string {
  if (identifier.length > URN_MAX_LENGTH) {
    throw new BadRequestError(
      'VALIDATION_FAILED',
      `identifier is at most ${URN_MAX_LENGTH} characters; this registry's are urn:air:${publisher}:agents:<name>`,
    );
  }
  const match = ARD_URN.exec(identifier);
  if (match === null) {
    throw new BadRequestError(
      'VALIDATION_FAILED',
      `identifier "${identifier.slice(0, 80)}" is not an ARD URN: expected urn:air:<publisher>:<namespace>:<name> ` +
        `with letters, digits, ".", "_" and "-" in each segment, e.g. urn:air:${publisher}:agents:<32 hex characters>`,
    );
  }
  const owner = (match[1] ?? '').toLowerCase();
  if (owner !== publisher) {
    throw new NotFoundError(
      'AGENT_NOT_FOUND',
      `${identifier.slice(0, 120)} is published by ${owner}, not by this registry (its entries are urn:air:${publisher}:agents:...); ask ${owner}'s registry`,
    );
  }
  const segments = (match[2] ?? '').slice(1).split(':');
  if (segments[0]?.toLowerCase() !== AGENTS_NAMESPACE || segments.length < 2) {
    throw new NotFoundError(
      'AGENT_NOT_FOUND',
      `this registry publishes agents only, as urn:air:${publisher}:agents:<name>; there is no entry ${identifier.slice(0, 120)}`,
    );
  }
  const name = segments.slice(1);
  if (name.length === 1 && WEB_AGENT_ID.test(name[0] ?? '')) {
    return webDid(didWebDomain, (name[0] ?? '').toLowerCase());
  }
  if (name[0]?.toLowerCase() === 'pkh') {
    try {
      return parseDid(`did:pkh:${name.slice(1).join(':')}`, didWebDomain).did;
    } catch (error) {
      if (!(error instanceof DidFormatError)) throw error;
    }
  }
  throw new BadRequestError(
    'VALIDATION_FAILED',
    `the name after urn:air:${publisher}:agents: must be 32 hex characters (a did:web agent) or ` +
      'pkh:eip155:<chain>:0x<40 hex characters> (a did:pkh agent)',
  );
}
