/** How a domain claim was proven: the well-known document over HTTPS, or a DNS TXT record. */
export type DomainProofMethod = 'https' | 'dns';

/** A domain an agent has proven it holds (migration 026). */
export interface AgentDomainsTable {
  did: string;
  /** Lowercase host name, with `:port` only where DOMAIN_PROOF_ALLOW_HTTP allows one. */
  domain: string;
  method: DomainProofMethod;
  verified_at: number;
  checked_at: number;
  /** Re-checks in a row that found no proof; the claim is dropped at the second. */
  failed_checks: number;
}

/** An agent's readable handle, under one of its verified domains (migration 026). */
export interface AgentHandlesTable {
  handle: string;
  did: string;
  domain: string;
  set_at: number;
}

export type DomainsPartial = { agent_domains: AgentDomainsTable; agent_handles: AgentHandlesTable };
