import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import {
  ApiError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  agentNotFound,
} from '../../kernel/errors.js';
import type { RegistrationLimiter } from '../agents/registration-limits.js';
import { findActiveAgent } from '../agents/agents-store.js';
import type { AuthenticatedAgent } from '../agents/authentication.js';
import { requireDid } from '../identity/did-param.js';
import { hostOf, parseDomain, parseHandle } from './domain-names.js';
import type { DomainProver } from './domain-proof.js';
import {
  didOfHandle,
  domainsOf,
  dueClaims,
  handleOf,
  recordClaim,
  recordFailedCheck,
  recordPassedCheck,
  removeClaim,
  writeHandle,
} from './domain-store.js';
import type { AgentDomains } from './schemas.js';

/** The most domains one agent may hold: enough for an organisation's few, bounded against hoarding. */
export const DOMAINS_PER_AGENT = 10;
/** A re-check that finds no proof this many times in a row drops the claim (one DNS blip does not). */
export const FAILED_CHECKS_TO_DROP = 2;
/** Claims re-checked per round: a round is bounded; the rest wait for the next. */
const RECHECK_BATCH = 50;

export interface DomainServiceDeps {
  db: Db;
  writes: TransactionRunner;
  clock: Clock;
  didWebDomain: string;
  prover: DomainProver;
  /** Counted apart from registrations, under the same per-address limits, and per agent. */
  limit: { limiter: RegistrationLimiter; perAgent: number };
  /** DOMAIN_PROOF_ALLOW_HTTP: ports in domains (development and tests). */
  allowPort: boolean;
  recheckMs: number;
}

export interface ClaimClient {
  address: string;
}

/** What the profile shows of an agent's domains and handle. */
export interface ProfileClaims {
  domains: string[];
  handle?: string;
}

/**
 * Domains an agent proves it holds (its DID in the domain's well-known document or TXT record), re-checked
 * on a schedule and dropped when the proof is gone; and a readable handle under one of them. Every claim,
 * drop and handle change is an event leaf of the log.
 */
export class DomainService {
  constructor(private readonly deps: DomainServiceDeps) {}

  async list(rawDid: string | undefined): Promise<AgentDomains> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    if ((await findActiveAgent(this.deps.db, did)) === undefined) throw agentNotFound(did);
    return this.state(did);
  }

  async claim(
    caller: AuthenticatedAgent,
    rawDid: string | undefined,
    raw: string,
    client: ClaimClient,
  ): Promise<AgentDomains> {
    const did = await this.ownAgent(caller, rawDid);
    const { domain } = parseDomain(raw, this.deps.allowPort);
    const held = await domainsOf(this.deps.db, did);
    if (held.length >= DOMAINS_PER_AGENT && !held.some((row) => row.domain === domain)) {
      throw new ConflictError(
        'DOMAIN_LIMIT_REACHED',
        `an agent may hold ${DOMAINS_PER_AGENT} domains; drop one (DELETE /api/agents/{did}/domains/{domain}) first`,
        'Too many domains',
      );
    }
    // Counted before the proof is fetched: each claim costs the registry an outbound request or two.
    await this.admit(did, client);
    const result = await this.deps.prover.check(domain, did);
    if (!result.proven) {
      throw new ApiError(
        422,
        'DOMAIN_PROOF_NOT_FOUND',
        'Domain not proven',
        `no proof of ${domain} for ${did}: ${result.findings.join('; ')}. Publish {"agents":["${did}"]} at ${this.deps.allowPort ? 'http' : 'https'}://${domain}/.well-known/agent-registry.json or a TXT record "did=${did}" at _agent-registry.${hostOf(domain)}, then claim again`,
      );
    }
    const now = this.deps.clock.now();
    await this.deps.writes.run((trx) => recordClaim(trx, did, domain, result.method, now));
    return this.state(did);
  }

  async drop(caller: AuthenticatedAgent, rawDid: string | undefined, raw: string): Promise<AgentDomains> {
    const did = await this.ownAgent(caller, rawDid);
    const { domain } = parseDomain(raw, this.deps.allowPort);
    const now = this.deps.clock.now();
    const removed = await this.deps.writes.run((trx) => removeClaim(trx, did, domain, now, 'dropped'));
    if (!removed) throw notClaimed(did, domain);
    return this.state(did);
  }

  async setHandle(
    caller: AuthenticatedAgent,
    rawDid: string | undefined,
    raw: string,
    client: ClaimClient,
  ): Promise<AgentDomains> {
    const did = await this.ownAgent(caller, rawDid);
    const { handle, host } = parseHandle(raw);
    const domain = (await domainsOf(this.deps.db, did)).find((row) => hostOf(row.domain) === host)?.domain;
    if (domain === undefined) {
      throw new ConflictError(
        'HANDLE_DOMAIN_NOT_VERIFIED',
        `${handle} is under ${host}, which is not a verified domain of ${did}; claim it first (POST /api/agents/{did}/domains)`,
        'Domain not verified',
      );
    }
    const now = this.deps.clock.now();
    await this.deps.writes.run(async (trx) => {
      await this.deps.limit.limiter.admit(trx, client.address, now, [
        { key: `agent:${did}`, limit: this.deps.limit.perAgent, what: `agent (${did})` },
      ]);
      await writeHandle(trx, did, { handle, domain }, now);
    });
    return this.state(did);
  }

  async clearHandle(caller: AuthenticatedAgent, rawDid: string | undefined): Promise<AgentDomains> {
    const did = await this.ownAgent(caller, rawDid);
    const now = this.deps.clock.now();
    const changed = await this.deps.writes.run((trx) => writeHandle(trx, did, undefined, now));
    if (!changed) throw new NotFoundError('HANDLE_NOT_FOUND', `${did} has no handle`);
    return this.state(did);
  }

  /** The DID a handle names; 404 HANDLE_NOT_FOUND when no agent has it. */
  async resolveHandle(raw: string): Promise<string> {
    const { handle } = parseHandle(raw);
    const did = await didOfHandle(this.deps.db, handle);
    if (did === undefined) throw new NotFoundError('HANDLE_NOT_FOUND', `no agent has the handle ${handle}`);
    return did;
  }

  /** What the profile shows; read only for agents that hold a domain. */
  async forProfile(did: string): Promise<ProfileClaims> {
    const [domains, handle] = await Promise.all([domainsOf(this.deps.db, did), handleOf(this.deps.db, did)]);
    return {
      domains: domains.map((row) => row.domain),
      ...(handle === undefined ? {} : { handle: handle.handle }),
    };
  }

  /**
   * One round of re-checks: each claim last checked DOMAIN_RECHECK_SECONDS ago or more is looked for
   * again; a claim whose proof is missing twice in a row is dropped (`domain.dropped`, reason
   * `proof_gone`). Returns how many claims were dropped.
   */
  async recheckDue(): Promise<number> {
    const started = this.deps.clock.now();
    const due = await dueClaims(this.deps.db, started - this.deps.recheckMs, RECHECK_BATCH);
    let dropped = 0;
    for (const row of due) {
      const result = await this.deps.prover.check(row.domain, row.did);
      const now = this.deps.clock.now();
      if (result.proven) {
        await this.deps.writes.run((trx) => recordPassedCheck(trx, row, result.method, now));
      } else if (row.failed_checks + 1 >= FAILED_CHECKS_TO_DROP) {
        const gone = await this.deps.writes.run((trx) =>
          removeClaim(trx, row.did, row.domain, now, 'proof_gone', row.checked_at),
        );
        if (gone) dropped += 1;
      } else {
        await this.deps.writes.run((trx) => recordFailedCheck(trx, row, now));
      }
    }
    return dropped;
  }

  private async state(did: string): Promise<AgentDomains> {
    const [domains, handle] = await Promise.all([domainsOf(this.deps.db, did), handleOf(this.deps.db, did)]);
    return {
      did,
      domains: domains.map(({ domain, method, verified_at, checked_at }) => ({
        domain,
        method,
        verified_at: Number(verified_at),
        checked_at: Number(checked_at),
      })),
      handle: handle?.handle ?? null,
      recheck_seconds: Math.round(this.deps.recheckMs / 1000),
    };
  }

  private async admit(did: string, client: ClaimClient): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.writes.run((trx) =>
      this.deps.limit.limiter.admit(trx, client.address, now, [
        { key: `agent:${did}`, limit: this.deps.limit.perAgent, what: `agent (${did})` },
      ]),
    );
  }

  /** 404 before 403: an unknown or deactivated agent is not found, whoever asks. */
  private async ownAgent(caller: AuthenticatedAgent, rawDid: string | undefined): Promise<string> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    if ((await findActiveAgent(this.deps.db, did)) === undefined) throw agentNotFound(did);
    if (caller.did !== did)
      throw new ForbiddenError('NOT_OWNER', `The token belongs to ${caller.did}, not to ${did}`);
    return did;
  }
}

const notClaimed = (did: string, domain: string): NotFoundError =>
  new NotFoundError('DOMAIN_NOT_CLAIMED', `${did} holds no claim on ${domain}`);
