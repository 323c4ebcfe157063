import { CHAIN_ID_PATTERN } from './chains.js';
import { toChecksumAddress } from './keys.js';

export type ParsedDid =
  | { method: 'web'; did: string; domain: string; agentId: string; isLocal: boolean }
  | { method: 'pkh'; did: string; chainId: string; address: string };

export class DidFormatError extends Error {}

const AGENT_ID = /^[0-9a-f]{32}$/i;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const webDid = (domain: string, agentId: string): string => `did:web:${domain}:agent:${agentId}`;
export const pkhDid = (chainId: string, address: string): string => `did:pkh:${chainId}:${address}`;
export const isAgentId = (value: string): boolean => AGENT_ID.test(value);

/**
 * Parses a DID as found in a request and returns its canonical spelling: lower-case agent id for
 * did:web, EIP-55 address for did:pkh. A path parameter arrives percent-decoded, so our own domain
 * `host%3Aport` may reach us as `host:port`; both spellings name the same DID.
 */
export function parseDid(raw: string, registryDomain: string): ParsedDid {
  if (raw === '') throw new DidFormatError('a DID is required');
  const parts = raw.split(':');
  if (parts[0] !== 'did' || parts.length < 3) {
    throw new DidFormatError(`"${truncate(raw)}" is not a DID (expected did:web:... or did:pkh:...)`);
  }
  if (parts[1] === 'web') return parseWebDid(raw, parts.slice(2), registryDomain);
  if (parts[1] === 'pkh') return parsePkhDid(raw, parts.slice(2));
  throw new DidFormatError(
    `DID method "${truncate(parts[1] ?? '')}" is not supported (use did:web or did:pkh)`,
  );
}

function parseWebDid(raw: string, rest: string[], registryDomain: string): ParsedDid {
  const agentId = rest.at(-1) ?? '';
  if (rest.length < 3 || rest.at(-2) !== 'agent' || !AGENT_ID.test(agentId)) {
    throw new DidFormatError(
      `"${truncate(raw)}" is not a registry did:web (expected did:web:<domain>:agent:<32 hex characters>)`,
    );
  }
  const domain = rest.slice(0, -2).join('%3A');
  const isLocal = domain.toLowerCase() === registryDomain.toLowerCase();
  const canonicalDomain = isLocal ? registryDomain : domain;
  const id = agentId.toLowerCase();
  return { method: 'web', did: webDid(canonicalDomain, id), domain: canonicalDomain, agentId: id, isLocal };
}

function parsePkhDid(raw: string, rest: string[]): ParsedDid {
  const [namespace, reference, address] = rest;
  const chainId = `${namespace}:${reference}`;
  if (
    rest.length !== 3 ||
    !CHAIN_ID_PATTERN.test(chainId) ||
    address === undefined ||
    !ADDRESS.test(address)
  ) {
    throw new DidFormatError(
      `"${truncate(raw)}" is not a valid did:pkh (expected did:pkh:eip155:<chain>:0x<40 hex characters>)`,
    );
  }
  const checksummed = toChecksumAddress(address);
  return { method: 'pkh', did: pkhDid(chainId, checksummed), chainId, address: checksummed };
}

const truncate = (value: string): string => (value.length > 120 ? `${value.slice(0, 117)}...` : value);
