import { Resolver } from 'node:dns/promises';
import { requestBounded } from '../../kernel/outbound-http.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { DomainProofMethod } from '../../db/schema/index.js';
import { hostOf } from './domain-names.js';

/** Where the proofs are published (docs/identity.md, "Domains"). */
export const WELL_KNOWN_PATH = '/.well-known/agent-registry.json';
export const TXT_PREFIX = '_agent-registry.';

/** A proof document is a short list: larger answers are refused before they are read. */
const DOCUMENT_MAX_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
const DNS_TIMEOUT_MS = 3_000;

export interface DomainProofDeps {
  /** The webhooks' network policy: a proof fetch never reaches a private address unless it allows it. */
  policy: WebhookNetworkPolicy;
  /** DOMAIN_DNS_SERVERS; empty: the system's. */
  dnsServers: readonly string[];
  /** DOMAIN_PROOF_ALLOW_HTTP: fetch over http:// (development registries have no certificates). */
  allowHttp: boolean;
}

/** What a check found: the method that proves the claim, or what each method found instead. */
export type ProofResult = { proven: true; method: DomainProofMethod } | { proven: false; findings: string[] };

class ProofMissing extends Error {}

/** Looks for an agent's DID in the domain's well-known document, then in its TXT record. */
export class DomainProver {
  private readonly resolver: Resolver;

  constructor(private readonly deps: DomainProofDeps) {
    this.resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 2 });
    if (deps.dnsServers.length > 0) this.resolver.setServers([...deps.dnsServers]);
  }

  async check(domain: string, did: string): Promise<ProofResult> {
    const findings: string[] = [];
    for (const [method, look] of [
      ['https', () => this.wellKnownNames(domain, did)],
      ['dns', () => this.txtNames(domain, did)],
    ] as const) {
      try {
        await look();
        return { proven: true, method };
      } catch (error) {
        findings.push(error instanceof ProofMissing ? error.message : `${method}: ${describe(error)}`);
      }
    }
    return { proven: false, findings };
  }

  /** The well-known document `{"agents": ["did:...", ...]}` lists the DID. */
  private async wellKnownNames(domain: string, did: string): Promise<void> {
    const url = new URL(`${this.deps.allowHttp ? 'http' : 'https'}://${domain}${WELL_KNOWN_PATH}`);
    this.deps.policy.assertDeliverableLiteral(url);
    const response = await requestBounded(this.deps.policy, url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'agent-registry domain check' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      maxResponseBytes: DOCUMENT_MAX_BYTES,
      tooLarge: () => new ProofMissing(`https: ${url.href} is larger than ${DOCUMENT_MAX_BYTES} bytes`),
    });
    if (response.status !== 200) {
      throw new ProofMissing(
        `https: ${url.href} answered ${response.status}, not 200 (redirects are not followed)`,
      );
    }
    let document: unknown;
    try {
      document = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new ProofMissing(`https: ${url.href} is not JSON`);
    }
    const agents = (document as { agents?: unknown } | null)?.agents;
    if (!Array.isArray(agents)) throw new ProofMissing(`https: ${url.href} has no "agents" array`);
    if (!agents.includes(did)) throw new ProofMissing(`https: ${url.href} does not list ${did} in "agents"`);
  }

  /** A TXT record `did=<DID>` at `_agent-registry.<host>` (one record per DID; several may be there). */
  private async txtNames(domain: string, did: string): Promise<void> {
    const name = `${TXT_PREFIX}${hostOf(domain)}`;
    let records: string[][];
    try {
      records = await this.resolver.resolveTxt(name);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') throw new ProofMissing(`dns: no TXT record at ${name}`);
      throw new ProofMissing(`dns: looking up TXT ${name} failed (${String(code ?? describe(error))})`);
    }
    if (!records.some((chunks) => chunks.join('').trim() === `did=${did}`)) {
      throw new ProofMissing(`dns: no TXT record "did=${did}" at ${name}`);
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error)
    return error.name === 'TimeoutError' || error.name === 'AbortError'
      ? 'timed out'
      : error.message.slice(0, 200);
  return 'failed';
}
