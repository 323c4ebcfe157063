import type { AgentDomains, AgentProfile } from '../types.js';
import { enc, type Transport } from './transport.js';

/** Domains an agent proves it holds and its handle under one (docs/identity.md, "Domains and handles"). */

export function listDomains(transport: Transport, did: string): Promise<AgentDomains> {
  return transport.request('GET', `/api/agents/${enc(did)}/domains`);
}

export function claimDomain(transport: Transport, did: string, domain: string): Promise<AgentDomains> {
  return transport.request('POST', `/api/agents/${enc(did)}/domains`, { body: { domain }, auth: true });
}

export function dropDomain(transport: Transport, did: string, domain: string): Promise<AgentDomains> {
  return transport.request('DELETE', `/api/agents/${enc(did)}/domains/${enc(domain)}`, { auth: true });
}

export function setHandle(transport: Transport, did: string, handle: string): Promise<AgentDomains> {
  return transport.request('PUT', `/api/agents/${enc(did)}/handle`, { body: { handle }, auth: true });
}

export function clearHandle(transport: Transport, did: string): Promise<AgentDomains> {
  return transport.request('DELETE', `/api/agents/${enc(did)}/handle`, { auth: true });
}

export function getAgentByHandle(transport: Transport, handle: string): Promise<AgentProfile> {
  return transport.request('GET', '/api/agents/by-handle', { query: { handle } });
}
