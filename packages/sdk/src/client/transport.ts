import { NetworkError, RegistryError, type RegistryErrorBody } from '../errors.js';

export type Query = Record<string, string | number | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Sends the bearer token, renewing it once when the registry refuses it. */
  auth?: boolean;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
  /** Answers the body as text (a signed note, a key) instead of parsing JSON. */
  text?: boolean;
  /** Answers the body as bytes (a tile) instead of parsing JSON. */
  bytes?: boolean;
  /**
   * Retries after a network error, 429 or 503 (see RetryPolicy); only idempotent requests (GET, HEAD,
   * PUT, DELETE, or one with an Idempotency-Key) are retried. 0: never (a caller with its own backoff).
   */
  retries?: number;
}

/** How failed idempotent requests are retried: up to `max` more times, backing off from `baseDelayMs`. */
export interface RetryPolicy {
  /** More attempts after the first; 0 turns retries off. Default 2. */
  max?: number;
  /** First backoff; each next one doubles, with full jitter. Default 500 ms. */
  baseDelayMs?: number;
}

/** A Retry-After longer than this is not waited for: the error goes to the caller, who can decide. */
const RETRY_AFTER_MAX_SECONDS = 20;
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** What the per-area API functions need of the client: one request, its token renewed when refused. */
export interface Transport {
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

/** One path segment, percent-encoded. */
export const enc = encodeURIComponent;

/** HTTP to one registry: builds the request, parses the JSON answer and maps an error answer to RegistryError. */
export class HttpTransport {
  private readonly retryMax: number;
  private readonly retryBaseMs: number;

  constructor(
    private readonly registry: string,
    private readonly fetchImpl: typeof fetch,
    private readonly headers: Record<string, string>,
    retry: RetryPolicy = {},
  ) {
    this.retryMax = Math.max(0, Math.floor(retry.max ?? 2));
    this.retryBaseMs = Math.max(0, retry.baseDelayMs ?? 500);
  }

  /**
   * Sends a request (with `token` as the bearer when `options.auth`) and returns the parsed JSON body,
   * or throws RegistryError / NetworkError. An idempotent request that meets a network error, 429 or
   * 503 is sent again after a backoff (Retry-After when the registry gives one). Renewing a refused
   * token is the caller's.
   */
  async send<T>(
    method: string,
    path: string,
    options: RequestOptions,
    token: string | undefined,
  ): Promise<T> {
    const keyed = Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === 'idempotency-key');
    const retriable = IDEMPOTENT_METHODS.has(method.toUpperCase()) || keyed;
    const max = retriable ? (options.retries ?? this.retryMax) : 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.sendOnce<T>(method, path, options, token);
      } catch (error) {
        const wait = attempt < max ? this.retryDelay(error, attempt) : undefined;
        if (wait === undefined || options.signal?.aborted) throw error;
        await sleep(wait, options.signal);
        if (options.signal?.aborted) throw error;
      }
    }
  }

  /** How long to wait before sending again after `error`; undefined when it is not worth another try. */
  private retryDelay(error: unknown, attempt: number): number | undefined {
    if (!(error instanceof RegistryError)) return undefined;
    const transient = error.status === 0 || error.status === 429 || error.status === 503;
    if (!transient) return undefined;
    if (error.retryAfterSeconds !== undefined) {
      return error.retryAfterSeconds <= RETRY_AFTER_MAX_SECONDS ? error.retryAfterSeconds * 1000 : undefined;
    }
    const ceiling = this.retryBaseMs * 2 ** attempt;
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private async sendOnce<T>(
    method: string,
    path: string,
    options: RequestOptions,
    token: string | undefined,
  ): Promise<T> {
    const url = new URL(path, this.registry);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      accept: options.text ? 'text/plain' : options.bytes ? 'application/octet-stream' : 'application/json',
      ...this.headers,
      ...options.headers,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.auth && token !== undefined) headers.authorization = `Bearer ${token}`;
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
    if (options.bytes && response.ok) return new Uint8Array(await response.arrayBuffer()) as T;
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return (options.text ? text : parsed) as T;
    throw registryError(response, text, parsed, requestId);
  }
}

/** An error answer as RegistryError: the body's `{error, details, code}` when it has them, else the status. */
function registryError(
  response: Response,
  text: string,
  parsed: unknown,
  requestId: string | undefined,
): RegistryError {
  const body = (parsed !== null && typeof parsed === 'object' ? parsed : undefined) as
    RegistryErrorBody | undefined;
  const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
  return new RegistryError({
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
    status: response.status,
    code: typeof body?.code === 'string' ? body.code : `HTTP_${response.status}`,
    error: typeof body?.error === 'string' ? body.error : response.statusText,
    details: typeof body?.details === 'string' ? body.details : text.slice(0, 500),
    requestId,
    body,
  });
}
