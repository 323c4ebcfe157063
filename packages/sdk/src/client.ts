import { registryAudience } from '@agent-registry/protocol';
import { ClientConfigError, RegistryError } from './errors.js';
import type { AgentKey } from './keys.js';
import type {
  AgentChange,
  AgentProfile,
  ChainInfo,
  ChainList,
  ChangePage,
  DeactivateResponse,
  DidDocument,
  EditReviewRequest,
  InvocationConfig,
  InvokeResponse,
  AgentDomains,
  KeyChangeResult,
  KeyRecoveryStatus,
  JsonObject,
  Jwks,
  PaymentAddress,
  PendingTask,
  Profile,
  Readiness,
  RemoteEntriesPage,
  RemoteEntriesQuery,
  RemoteEntry,
  ObservationsPage,
  ObservationsQuery,
  Reputation,
  Review,
  ReviewList,
  SearchResponse,
  Session,
  Stats,
  Task,
  TaskAck,
  UpdateInvocationConfigRequest,
  UpdateInvocationConfigResponse,
  UpdateProfileRequest,
} from './types.js';
import * as agents from './client/agents.js';
import * as keys from './client/keys.js';
import * as domains from './client/domains.js';
import * as discovery from './client/discovery.js';
import type { SearchOptions } from './client/discovery.js';
import * as invocation from './client/invocation.js';
import type { InvokeOptions } from './client/invocation.js';
import * as reviews from './client/reviews.js';
import * as transparency from './client/transparency.js';
import { watchesApi, type WatchesApi } from './client/watches.js';
import {
  appealSuspension,
  moderationApi,
  type ModerationAppeal,
  type ModerationApi,
} from './client/moderation.js';
import type { FollowLogOptions, LogCatchUp, VerifiedAgent } from './client/transparency.js';
import type { Page, ReviewInput } from './client/reviews.js';
import {
  MessageClock,
  curedBySignature,
  signedLogin,
  signedRegistration,
  subjectOf,
} from './client/session.js';
import { HttpTransport, type RequestOptions, type RetryPolicy } from './client/transport.js';
import { isLocalAddress } from './client/local-address.js';

export type { InvokeOptions, Page, ReviewInput, RetryPolicy, SearchOptions };

export interface RegistryClientOptions {
  /** Base URL of the registry, e.g. `https://registry.example`. */
  registry: string;
  /** The agent's key: needed to register, log in and renew tokens. */
  key?: AgentKey;
  /** A token already held. */
  token?: string;
  /** The agent's DID when already known (else learnt at register/login or from the token). */
  did?: string;
  /**
   * The registry's name in signed messages. Unset, the client asks the registry once
   * (`GET /.well-known/agent-registry.json`) and signs for the URL it names when `registry` is a local
   * address (loopback, a private IP, a name without a dot); otherwise for the origin of `registry`.
   * Set it when you reach a public registry by another public address (e.g. through a tunnel).
   */
  audience?: string;
  /** fetch to use (defaults to globalThis.fetch). */
  fetch?: typeof fetch;
  /** Called with every new token (registration, login, renewal), e.g. to persist it. */
  onToken?: (session: Session) => void;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /**
   * Retries of idempotent requests (reads, PUT, DELETE, and invocations, which carry an Idempotency-Key)
   * after a network error, 429 or 503: `{ max: 2, baseDelayMs: 500 }` by default; `{ max: 0 }` turns
   * them off.
   */
  retry?: RetryPolicy;
}

// The class holds the session (key, DID, token) and renews the token; each area's requests are built
// in client/ (agents, discovery, invocation, reviews) and sent by client/transport.ts.

/** A typed client for every endpoint of the registry; fetch only, so it runs in Node 20+ and browsers. */
export class RegistryClient {
  /** The registry's origin, e.g. `https://registry.example`. */
  readonly registry: string;
  /** Whether the caller named the audience: then it is never asked of the registry. */
  private readonly audienceGiven: boolean;
  #audience: string;
  private audience$: Promise<string> | undefined;
  /** Replaced by rotateKey once the registry has taken the new key. */
  key: AgentKey | undefined;
  did: string | undefined;
  /** The bearer token, kept out of logs, `JSON.stringify`, spreads and clones like the key. */
  #token: string | undefined;
  private readonly http: HttpTransport;
  private readonly onToken: ((session: Session) => void) | undefined;
  private login$: Promise<Session> | undefined;
  private readonly messageClock = new MessageClock();
  /** Watches: be told (signed webhooks) of another agent's or a remote entry's changes (docs/watches.md). */
  readonly watches: WatchesApi;
  /** Moderation: report an agent, read the public decisions, and the operator's calls (docs/moderation.md). */
  readonly moderation: ModerationApi;

  constructor(options: RegistryClientOptions) {
    this.registry = registryAudience(options.registry);
    this.audienceGiven = options.audience !== undefined;
    this.#audience = options.audience === undefined ? this.registry : registryAudience(options.audience);
    this.key = options.key;
    this.token = options.token;
    this.did = options.did ?? (options.token === undefined ? undefined : subjectOf(options.token));
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function')
      throw new ClientConfigError('no fetch available: pass options.fetch');
    this.http = new HttpTransport(
      this.registry,
      fetchImpl.bind(globalThis),
      options.headers ?? {},
      options.retry,
    );
    this.onToken = options.onToken;
    this.watches = watchesApi(this);
    this.moderation = moderationApi(this);
  }

  /** The name signed messages bind to: the `audience` option, else the registry's own URL once learnt. */
  get audience(): string {
    return this.#audience;
  }

  /**
   * The audience to sign for, asked of the registry once and cached. Only a registry reached at a local
   * address may name another origin: a public one that names another would be asking for signatures
   * it could replay there. A registry without the route (older) is signed for as reached.
   */
  async signingAudience(): Promise<string> {
    if (this.audienceGiven || !isLocalAddress(this.registry)) return this.#audience;
    this.audience$ ??= this.http
      .send<{ audience?: unknown }>('GET', '/.well-known/agent-registry.json', {}, undefined)
      .then(
        (answer) => {
          if (typeof answer.audience === 'string') this.#audience = registryAudience(answer.audience);
          return this.#audience;
        },
        (error: unknown) => {
          if (error instanceof RegistryError && error.status === 404) return this.#audience;
          // Not cached: the next signature asks again.
          this.audience$ = undefined;
          throw error;
        },
      );
    return this.audience$;
  }

  /** The current bearer token (set by register, login and renewal; settable when you hold one). */
  get token(): string | undefined {
    return this.#token;
  }

  set token(token: string | undefined) {
    this.#token = token;
  }

  /** What `JSON.stringify` writes: where and who, never the key's private part or the token. */
  toJSON(): Record<string, unknown> {
    return {
      registry: this.registry,
      audience: this.audience,
      did: this.did ?? null,
      key: this.key?.toJSON() ?? null,
      token: this.#token === undefined ? null : '[redacted]',
    };
  }

  /** What `console.log` and `util.inspect` show: the same as toJSON. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `RegistryClient ${JSON.stringify(this.toJSON())}`;
  }

  // ---- identity -------------------------------------------------------------------------------

  /** Registers the agent: signs the registration message (bound to this registry) and keeps the session. */
  async register(profile: Profile, options: { referrer?: string } = {}): Promise<Session> {
    const key = this.requireKey('register');
    const audience = await this.signingAudience();
    const body = await signedRegistration(key, profile, audience, this.messageClock, options.referrer);
    const session = await this.request<Session>('POST', '/api/agents/register', { body });
    this.adopt(session);
    return session;
  }

  /** A new token by signature (`POST /api/auth/token`), bound to this registry. */
  async login(): Promise<Session> {
    // Concurrent renewals share one signature: each signed message is accepted once.
    this.login$ ??= this.signIn().finally(() => {
      this.login$ = undefined;
    });
    return this.login$;
  }

  private async signIn(): Promise<Session> {
    const key = this.requireKey('log in');
    const did = this.did ?? (await key.did()) ?? undefined;
    if (did === undefined) {
      throw new ClientConfigError(
        'logging in needs the agent DID: pass { did } to RegistryClient (an Ed25519 agent learns it at registration)',
      );
    }
    const body = await signedLogin(key, did, await this.signingAudience(), this.messageClock);
    const session = await this.request<Session>('POST', '/api/auth/token', { body });
    this.adopt(session);
    return session;
  }

  // ---- keys (docs/identity.md) ----------------------------------------------------------------

  /**
   * Replaces the agent's key by `next` (both sign), then uses `next` and the token the answer carries.
   * Pass `signed` (from signRotation) to resend a rotation whose answer was lost.
   */
  async rotateKey(next: AgentKey, signed?: Record<string, unknown>): Promise<KeyChangeResult> {
    const did = this.requireDid();
    const body = signed ?? (await this.signRotation(next));
    const result = await keys.rotateKey(this, did, body);
    this.key = next;
    this.adopt({ did: result.did, token: result.token, expires_at: result.expires_at });
    return result;
  }

  /** The signed rotation body, to keep (e.g. on disk) before sending it with rotateKey. */
  async signRotation(next: AgentKey): Promise<Record<string, unknown>> {
    return keys.signedRotation(await this.signing(), this.requireKey('rotate the key'), next);
  }

  async setRecoveryKey(recovery: AgentKey): Promise<KeyRecoveryStatus> {
    return keys.setRecoveryKey(this, await this.signing(), this.requireKey('set a recovery key'), recovery);
  }

  /** Signed by the recovery key: needs no current key, only the agent's DID. */
  async startRecovery(
    recovery: AgentKey,
    next: AgentKey,
    did: string = this.requireDid(),
  ): Promise<KeyRecoveryStatus> {
    return keys.startRecovery(this, await this.signing(did), recovery, next);
  }

  async cancelRecovery(): Promise<KeyRecoveryStatus> {
    return keys.cancelRecovery(this, await this.signing(), this.requireKey('cancel a recovery'));
  }

  getKeyRecovery(did: string = this.requireDid()): Promise<KeyRecoveryStatus> {
    return keys.getKeyRecovery(this, did);
  }

  /** A suspended agent appeals its suspension `decision` (seq in GET /api/moderation), signed with its key. */
  async appealSuspension(decision: number, statement: string): Promise<ModerationAppeal> {
    return appealSuspension(
      this,
      await this.signing(),
      this.requireKey('appeal a suspension'),
      decision,
      statement,
    );
  }

  private async signing(did: string = this.requireDid()) {
    return { did, audience: await this.signingAudience(), clock: this.messageClock };
  }

  // ---- domains and handles (docs/identity.md) ---------------------------------------------------

  /** The agent's verified domains and handle. */
  listDomains(did: string = this.requireDid()): Promise<AgentDomains> {
    return domains.listDomains(this, did);
  }

  /** Asks the registry to check the domain's proof now (claiming a held domain checks it again). */
  claimDomain(domain: string, did: string = this.requireDid()): Promise<AgentDomains> {
    return domains.claimDomain(this, did, domain);
  }

  dropDomain(domain: string, did: string = this.requireDid()): Promise<AgentDomains> {
    return domains.dropDomain(this, did, domain);
  }

  /** Takes `handle` (e.g. com.example/translator) under one of the agent's verified domains. */
  setHandle(handle: string, did: string = this.requireDid()): Promise<AgentDomains> {
    return domains.setHandle(this, did, handle);
  }

  clearHandle(did: string = this.requireDid()): Promise<AgentDomains> {
    return domains.clearHandle(this, did);
  }

  /** The profile of the agent holding `handle`. */
  getAgentByHandle(handle: string): Promise<AgentProfile> {
    return domains.getAgentByHandle(this, handle);
  }

  // ---- agents ---------------------------------------------------------------------------------

  getAgent(did: string): Promise<AgentProfile> {
    return agents.getAgent(this, did);
  }

  /**
   * Checks that the profile served for `did` is the latest one the registry's transparency log holds
   * (docs/transparency-log.md); throws LogVerificationError naming what does not match. Pass the
   * registry's verifier key from a source you trust; without it, it is read from `/log/verifier-key`.
   */
  verifyAgent(did: string, options: { verifierKey?: string } = {}): Promise<VerifiedAgent> {
    return transparency.verifyAgent(this, did, options.verifierKey);
  }

  /**
   * One catch-up of a verifying mirror of the transparency log: pass the state the previous call
   * returned (none to start). Checks each named agent's served profile against its latest leaf.
   * Throws LogVerificationError on a rewound, forked or rewritten log or a profile that is not the logged one.
   */
  followLog(options: FollowLogOptions): Promise<LogCatchUp> {
    return transparency.followLog(
      this,
      (path) => this.request<Uint8Array>('GET', path, { bytes: true }),
      options,
    );
  }

  updateAgent(patch: UpdateProfileRequest, did: string = this.requireDid()): Promise<AgentProfile> {
    return agents.updateAgent(this, patch, did);
  }

  deactivate(did: string = this.requireDid()): Promise<DeactivateResponse> {
    return agents.deactivate(this, did);
  }

  getInvocation(did: string = this.requireDid()): Promise<InvocationConfig> {
    return agents.getInvocation(this, did);
  }

  setInvocation(
    config: UpdateInvocationConfigRequest,
    did: string = this.requireDid(),
  ): Promise<UpdateInvocationConfigResponse> {
    return agents.setInvocation(this, config, did);
  }

  getPaymentAddress(did: string): Promise<PaymentAddress> {
    return agents.getPaymentAddress(this, did);
  }

  // ---- invocation -----------------------------------------------------------------------------

  /**
   * Invokes a capability and returns the agent's output. Throws InvocationTimeoutError (504),
   * WebhookFailedError (502 WEBHOOK_FAILED) or InvocationFailedError (other 502), each with `taskId`.
   */
  async invoke<Output extends JsonObject = JsonObject>(
    did: string,
    capability: string,
    input: JsonObject,
    options: InvokeOptions = {},
  ): Promise<Output> {
    return (await this.invokeRaw(did, capability, input, options)).output as Output;
  }

  /** Like invoke, returning the whole response (`task_id`, `status`, `output`). */
  async invokeRaw(
    did: string,
    capability: string,
    input: JsonObject,
    options: InvokeOptions = {},
  ): Promise<InvokeResponse> {
    return invocation.invokeRaw(this, did, capability, input, options);
  }

  getTask(taskId: string): Promise<Task> {
    return invocation.getTask(this, taskId);
  }

  /** Pending tasks of this (queue-mode) agent; `wait` long-polls up to that many seconds (at most 60). */
  async pollTasks(
    options: { limit?: number; wait?: number; signal?: AbortSignal } = {},
  ): Promise<PendingTask[]> {
    return invocation.pollTasks(this, options);
  }

  acceptTask(taskId: string): Promise<TaskAck> {
    return invocation.acceptTask(this, taskId);
  }

  /**
   * Tells the registry this agent's worker has stopped: it reads offline at once, and calls to it are
   * refused as offline instead of waiting their timeout (the next poll makes it online again).
   * `serve()`'s `close()` calls it.
   */
  reportWorkerStopped(): Promise<{ did: string; stopped_at: number | null }> {
    return invocation.reportWorkerStopped(this);
  }

  completeTask(taskId: string, output: JsonObject): Promise<TaskAck> {
    return invocation.completeTask(this, taskId, output);
  }

  failTask(taskId: string, error: string): Promise<TaskAck> {
    return invocation.failTask(this, taskId, error);
  }

  // ---- discovery ------------------------------------------------------------------------------

  search(options: SearchOptions = {}): Promise<SearchResponse> {
    return discovery.search(this, options);
  }

  /** Every agent a search matches, page after page through `next_cursor` (no depth limit). */
  searchAll(
    options: Omit<SearchOptions, 'offset' | 'cursor'> = {},
  ): AsyncGenerator<SearchResponse['agents'][number]> {
    return discovery.searchAll(this, options);
  }

  /** One page of the change feed after `since` (omit it to start from the beginning). */
  changes(options: { since?: string; limit?: number } = {}): Promise<ChangePage> {
    return discovery.changes(this, options);
  }

  /**
   * Every change after `since`, page after page, as a mirror applies them (profile: upsert; null
   * profile: delete). Ends when the feed is caught up; `onCursor` receives the position to resume from.
   */
  followChanges(
    options: { since?: string; limit?: number; onCursor?: (cursor: string) => void } = {},
  ): AsyncGenerator<AgentChange> {
    return discovery.followChanges(this, options);
  }

  /**
   * One page of the read-only entries of agents that live elsewhere (docs/federation.md), filtered
   * by `source`, `kind` and `verification`; pass the page's `next_after` as `after` for the next.
   */
  listRemoteEntries(filters: RemoteEntriesQuery = {}): Promise<RemoteEntriesPage> {
    return discovery.listRemoteEntries(this, filters);
  }

  /**
   * One remote entry by its id (from `listRemoteEntries` or a federated search), with its provenance
   * and the endpoints where it is invoked at its home; a RegistryError 404 `REMOTE_ENTRY_NOT_FOUND`
   * once it is gone.
   */
  getRemoteEntry(id: string): Promise<RemoteEntry> {
    return discovery.getRemoteEntry(this, id);
  }

  /**
   * One page of an imported entry's observed changes (status class or tools digest), newest first,
   * each with the transparency-log leaf that records it; pass `next_cursor` as `cursor` for the next.
   */
  listObservations(id: string, query: ObservationsQuery = {}): Promise<ObservationsPage> {
    return discovery.listObservations(this, id, query);
  }

  resolveDid(did: string): Promise<DidDocument> {
    return discovery.resolveDid(this, did);
  }

  listChains(): Promise<ChainList> {
    return discovery.listChains(this);
  }

  getChain(chainId: string): Promise<ChainInfo> {
    return discovery.getChain(this, chainId);
  }

  getStats(): Promise<Stats> {
    return discovery.getStats(this);
  }

  getJwks(): Promise<Jwks> {
    return discovery.getJwks(this);
  }

  /** `GET /readyz`: resolves when the registry and its database answer, throws otherwise. */
  health(): Promise<Readiness> {
    return discovery.health(this);
  }

  // ---- reviews --------------------------------------------------------------------------------

  review(input: ReviewInput): Promise<Review> {
    return reviews.review(this, input);
  }

  editReview(reviewId: string, edit: EditReviewRequest): Promise<Review> {
    return reviews.editReview(this, reviewId, edit);
  }

  getReviews(did: string, page: Page = {}): Promise<ReviewList> {
    return reviews.getReviews(this, did, page);
  }

  myReviews(page: Page = {}): Promise<ReviewList> {
    return reviews.myReviews(this, page);
  }

  getReputation(did: string): Promise<Reputation> {
    return reviews.getReputation(this, did);
  }

  // ---- requests -------------------------------------------------------------------------------

  /**
   * Sends one request and returns the parsed JSON body, or throws RegistryError / NetworkError.
   * With `auth`, a missing, expired or revoked token is renewed by signature once and the request
   * retried.
   */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const renewable = options.auth && this.key !== undefined;
    if (renewable && this.token === undefined) await this.login();
    const tokenSent = this.token;
    try {
      return await this.http.send<T>(method, path, options, this.token);
    } catch (error) {
      if (!renewable || !curedBySignature(error)) throw error;
      // A concurrent request may have renewed the token while this one was refused: use that one.
      if (this.token === tokenSent) await this.login();
      return this.http.send<T>(method, path, options, this.token);
    }
  }

  private adopt(session: Session): void {
    this.token = session.token;
    this.did = session.did;
    this.onToken?.(session);
  }

  private requireKey(action: string): AgentKey {
    if (this.key === undefined)
      throw new ClientConfigError(`to ${action}, create the RegistryClient with a key`);
    return this.key;
  }

  private requireDid(): string {
    if (this.did === undefined) {
      throw new ClientConfigError(
        'no agent DID yet: register or log in first, or pass { did } to RegistryClient',
      );
    }
    return this.did;
  }
}
