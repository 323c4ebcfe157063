import {
  authenticationMessage,
  registrationMessage,
  registryAudience,
  type SearchOrder,
  type SearchSort,
} from '@agent-registry/protocol';
import {
  ClientConfigError,
  InvocationFailedError,
  InvocationTimeoutError,
  NetworkError,
  RegistryError,
  WebhookFailedError,
  type RegistryErrorBody,
  type RegistryErrorInit,
} from './errors.js';
import type { AgentKey } from './keys.js';
import type {
  AgentProfile,
  ChainInfo,
  AgentChange,
  ChainList,
  ChangePage,
  DeactivateResponse,
  DidDocument,
  EditReviewRequest,
  InvocationConfig,
  InvokeResponse,
  JsonObject,
  Jwks,
  PaymentAddress,
  PendingTask,
  Profile,
  Readiness,
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
   * The registry's name in signed messages; defaults to the origin of `registry`. Set it when you reach
   * the registry by another address than its PUBLIC_URL (e.g. through a tunnel).
   */
  audience?: string;
  /** fetch to use (defaults to globalThis.fetch). */
  fetch?: typeof fetch;
  /** Called with every new token (registration, login, renewal), e.g. to persist it. */
  onToken?: (session: Session) => void;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

export interface InvokeOptions {
  /** How long the registry waits for the agent (default 30000, at most 300000). */
  timeoutMs?: number;
  /** Retrying with the same key attaches to the same task instead of creating a second one. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface SearchOptions {
  q?: string;
  capability?: string;
  tags?: string[];
  minReputation?: number;
  /** Lowest 30-day success rate (0-1) the registry measured; unmeasured agents are left out. */
  minSuccessRate?: number;
  /** Only agents that completed a brokered call within this many days. */
  activeWithinDays?: number;
  limit?: number;
  offset?: number;
  /** `next_cursor` of the previous page of the same search, instead of `offset`. */
  cursor?: string;
  sort?: SearchSort;
  order?: SearchOrder;
}

export interface Page {
  limit?: number;
  offset?: number;
  /** `next_cursor` of the previous page of the same list, instead of `offset`. */
  cursor?: string;
}

export interface ReviewInput {
  targetDid: string;
  rating: number;
  comment?: string | null;
  /** The task id of an invocation you made: makes the review verified. */
  callRecordId?: string | null;
}

type Query = Record<string, string | number | undefined>;

interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Sends the bearer token, renewing it once when the registry refuses it. */
  auth?: boolean;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
}

/** Token errors a new signature cures; AGENT_DEACTIVATED is not one of them. */
const RENEWABLE = new Set(['TOKEN_EXPIRED', 'TOKEN_INVALID', 'TOKEN_MISSING']);

const enc = encodeURIComponent;

/** Reads `sub` from a JWT without verifying it (the registry verifies; we only need our own DID). */
function subjectOf(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(json, (char) => char.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/** A typed client for every endpoint of the registry; fetch only, so it runs in Node 20+ and browsers. */
export class RegistryClient {
  /** The registry's origin, e.g. `https://registry.example`. */
  readonly registry: string;
  /** The name signed messages bind to. */
  readonly audience: string;
  readonly key: AgentKey | undefined;
  did: string | undefined;
  /** The bearer token, kept out of logs, `JSON.stringify`, spreads and clones like the key. */
  #token: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly onToken: ((session: Session) => void) | undefined;
  private readonly headers: Record<string, string>;
  private login$: Promise<Session> | undefined;
  private lastTimestamp = 0;

  constructor(options: RegistryClientOptions) {
    this.registry = registryAudience(options.registry);
    this.audience = options.audience === undefined ? this.registry : registryAudience(options.audience);
    this.key = options.key;
    this.token = options.token;
    this.did = options.did ?? (options.token === undefined ? undefined : subjectOf(options.token));
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function')
      throw new ClientConfigError('no fetch available: pass options.fetch');
    this.fetchImpl = fetchImpl.bind(globalThis);
    this.onToken = options.onToken;
    this.headers = options.headers ?? {};
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
    // What is signed must be what is sent: one JSON round trip drops undefined members from both.
    const sent = JSON.parse(JSON.stringify(profile)) as Profile;
    const publicKey = await key.publicKey();
    const timestamp = this.nextTimestamp();
    const message = registrationMessage(key.keyType, {
      public_key: publicKey,
      chain_id: key.chainId,
      timestamp,
      profile: sent,
      audience: this.audience,
    });
    const body: Record<string, unknown> = {
      public_key: publicKey,
      key_type: key.keyType,
      ...(key.chainId === null ? {} : { chain_id: key.chainId }),
      profile: sent,
      timestamp,
      signature: await key.sign(message),
      audience: this.audience,
      ...(options.referrer === undefined ? {} : { referrer: options.referrer }),
    };
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
    const timestamp = this.nextTimestamp();
    const message = authenticationMessage(key.keyType, { did, audience: this.audience, timestamp });
    const session = await this.request<Session>('POST', '/api/auth/token', {
      body: { did, timestamp, signature: await key.sign(message), audience: this.audience },
    });
    this.adopt(session);
    return session;
  }

  // ---- agents ---------------------------------------------------------------------------------

  getAgent(did: string): Promise<AgentProfile> {
    return this.request('GET', `/api/agents/${enc(did)}`);
  }

  updateAgent(patch: UpdateProfileRequest, did: string = this.requireDid()): Promise<AgentProfile> {
    return this.request('PUT', `/api/agents/${enc(did)}`, { body: patch, auth: true });
  }

  deactivate(did: string = this.requireDid()): Promise<DeactivateResponse> {
    return this.request('DELETE', `/api/agents/${enc(did)}`, { auth: true });
  }

  getInvocation(did: string = this.requireDid()): Promise<InvocationConfig> {
    return this.request('GET', `/api/agents/${enc(did)}/invocation`);
  }

  setInvocation(
    config: UpdateInvocationConfigRequest,
    did: string = this.requireDid(),
  ): Promise<UpdateInvocationConfigResponse> {
    return this.request('PUT', `/api/agents/${enc(did)}/invocation`, { body: config, auth: true });
  }

  getPaymentAddress(did: string): Promise<PaymentAddress> {
    return this.request('GET', `/api/agents/${enc(did)}/payment-address`);
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
    const body = {
      target_did: did,
      capability,
      input,
      ...(options.timeoutMs === undefined ? {} : { timeout_ms: options.timeoutMs }),
    };
    try {
      return await this.request<InvokeResponse>('POST', '/api/invoke', {
        body,
        auth: true,
        signal: options.signal,
        headers: options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey },
      });
    } catch (error) {
      throw invocationError(error);
    }
  }

  getTask(taskId: string): Promise<Task> {
    return this.request('GET', `/api/tasks/${enc(taskId)}`, { auth: true });
  }

  /** Pending tasks of this (queue-mode) agent; `wait` long-polls up to that many seconds (at most 60). */
  async pollTasks(
    options: { limit?: number; wait?: number; signal?: AbortSignal } = {},
  ): Promise<PendingTask[]> {
    const response = await this.request<{ tasks: PendingTask[] }>('GET', '/api/agent/tasks', {
      query: { limit: options.limit, wait: options.wait },
      auth: true,
      signal: options.signal,
    });
    return response.tasks;
  }

  acceptTask(taskId: string): Promise<TaskAck> {
    return this.request('POST', `/api/agent/tasks/${enc(taskId)}/accept`, { auth: true, body: {} });
  }

  completeTask(taskId: string, output: JsonObject): Promise<TaskAck> {
    return this.request('POST', `/api/agent/tasks/${enc(taskId)}/result`, { auth: true, body: { output } });
  }

  failTask(taskId: string, error: string): Promise<TaskAck> {
    return this.request('POST', `/api/agent/tasks/${enc(taskId)}/fail`, { auth: true, body: { error } });
  }

  // ---- discovery ------------------------------------------------------------------------------

  search(options: SearchOptions = {}): Promise<SearchResponse> {
    return this.request('GET', '/api/agents/search', {
      query: {
        q: options.q,
        capability: options.capability,
        tags: options.tags === undefined || options.tags.length === 0 ? undefined : options.tags.join(','),
        min_reputation: options.minReputation,
        min_success_rate: options.minSuccessRate,
        active_within_days: options.activeWithinDays,
        limit: options.limit,
        offset: options.offset,
        cursor: options.cursor,
        sort: options.sort,
        order: options.order,
      },
    });
  }

  /** Every agent a search matches, page after page through `next_cursor` (no depth limit). */
  async *searchAll(
    options: Omit<SearchOptions, 'offset' | 'cursor'> = {},
  ): AsyncGenerator<SearchResponse['agents'][number]> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.search({ ...options, cursor });
      yield* page.agents;
      if (page.next_cursor === null || page.next_cursor === undefined) return;
      cursor = page.next_cursor;
    }
  }

  /** One page of the change feed after `since` (omit it to start from the beginning). */
  changes(options: { since?: string; limit?: number } = {}): Promise<ChangePage> {
    return this.request('GET', '/api/agents/changes', {
      query: { since: options.since, limit: options.limit },
    });
  }

  /**
   * Every change after `since`, page after page, as a mirror applies them (profile: upsert; null
   * profile: delete). Ends when the feed is caught up; `onCursor` receives the position to resume from.
   */
  async *followChanges(
    options: { since?: string; limit?: number; onCursor?: (cursor: string) => void } = {},
  ): AsyncGenerator<AgentChange> {
    let since = options.since;
    for (;;) {
      const page = await this.changes({ since, limit: options.limit });
      yield* page.changes;
      since = page.next_cursor;
      options.onCursor?.(since);
      if (!page.has_more) return;
    }
  }

  resolveDid(did: string): Promise<DidDocument> {
    return this.request('GET', `/api/did/${enc(did)}`);
  }

  listChains(): Promise<ChainList> {
    return this.request('GET', '/api/chains');
  }

  getChain(chainId: string): Promise<ChainInfo> {
    return this.request('GET', `/api/chains/${enc(chainId)}`);
  }

  getStats(): Promise<Stats> {
    return this.request('GET', '/api/stats');
  }

  getJwks(): Promise<Jwks> {
    return this.request('GET', '/.well-known/jwks.json');
  }

  /** `GET /readyz`: resolves when the registry and its database answer, throws otherwise. */
  health(): Promise<Readiness> {
    return this.request('GET', '/readyz');
  }

  // ---- reviews --------------------------------------------------------------------------------

  review(input: ReviewInput): Promise<Review> {
    return this.request('POST', '/api/reviews', {
      auth: true,
      body: {
        target_did: input.targetDid,
        rating: input.rating,
        ...(input.comment === undefined ? {} : { comment: input.comment }),
        ...(input.callRecordId === undefined ? {} : { call_record_id: input.callRecordId }),
      },
    });
  }

  editReview(reviewId: string, edit: EditReviewRequest): Promise<Review> {
    return this.request('PUT', `/api/reviews/${enc(reviewId)}`, { auth: true, body: edit });
  }

  getReviews(did: string, page: Page = {}): Promise<ReviewList> {
    return this.request('GET', `/api/agents/${enc(did)}/reviews`, { query: { ...page } });
  }

  myReviews(page: Page = {}): Promise<ReviewList> {
    return this.request('GET', '/api/reviews/my', { auth: true, query: { ...page } });
  }

  getReputation(did: string): Promise<Reputation> {
    return this.request('GET', `/api/agents/${enc(did)}/reputation`);
  }

  // ---- transport ------------------------------------------------------------------------------

  /**
   * Sends one request and returns the parsed JSON body, or throws RegistryError / NetworkError.
   * With `auth`, a missing, expired or revoked token is renewed by signature once and the request
   * retried.
   */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    if (options.auth && this.token === undefined && this.key !== undefined) await this.login();
    const tokenSent = this.token;
    try {
      return await this.send<T>(method, path, options);
    } catch (error) {
      if (
        options.auth &&
        this.key !== undefined &&
        error instanceof RegistryError &&
        error.status === 401 &&
        RENEWABLE.has(error.code)
      ) {
        // A concurrent request may have renewed the token while this one was refused: use that one.
        if (this.token === tokenSent) await this.login();
        return this.send<T>(method, path, options);
      }
      throw error;
    }
  }

  private async send<T>(method: string, path: string, options: RequestOptions): Promise<T> {
    const url = new URL(path, this.registry);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.headers,
      ...options.headers,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.auth && this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const reason =
        error instanceof Error
          ? ((error.cause as Error | undefined)?.message ?? error.message)
          : String(error);
      throw new NetworkError(
        `${method} ${url.pathname} got no answer from ${this.registry}: ${reason}`,
        error,
      );
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return parsed as T;
    const body = (parsed !== null && typeof parsed === 'object' ? parsed : undefined) as
      RegistryErrorBody | undefined;
    throw new RegistryError({
      status: response.status,
      code: typeof body?.code === 'string' ? body.code : `HTTP_${response.status}`,
      error: typeof body?.error === 'string' ? body.error : response.statusText,
      details: typeof body?.details === 'string' ? body.details : text.slice(0, 500),
      requestId,
      body,
    });
  }

  private adopt(session: Session): void {
    this.token = session.token;
    this.did = session.did;
    this.onToken?.(session);
  }

  /** Strictly increasing: two messages signed in the same millisecond would be the same message. */
  private nextTimestamp(): number {
    this.lastTimestamp = Math.max(Date.now(), this.lastTimestamp + 1);
    return this.lastTimestamp;
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

function invocationError(error: unknown): unknown {
  if (!(error instanceof RegistryError) || error instanceof NetworkError) return error;
  const init: RegistryErrorInit = {
    status: error.status,
    code: error.code,
    error: error.error,
    details: error.details,
    requestId: error.requestId,
    body: error.body,
    cause: error,
  };
  if (error.status === 504) return new InvocationTimeoutError(init);
  if (error.status === 502) {
    return error.code === 'WEBHOOK_FAILED' ? new WebhookFailedError(init) : new InvocationFailedError(init);
  }
  return error;
}
