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
}

/** What the per-area API functions need of the client: one request, its token renewed when refused. */
export interface Transport {
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

/** One path segment, percent-encoded. */
export const enc = encodeURIComponent;

/** HTTP to one registry: builds the request, parses the JSON answer and maps an error answer to RegistryError. */
export class HttpTransport {
  constructor(
    private readonly registry: string,
    private readonly fetchImpl: typeof fetch,
    private readonly headers: Record<string, string>,
  ) {}

  /**
   * Sends one request (with `token` as the bearer when `options.auth`) and returns the parsed JSON body,
   * or throws RegistryError / NetworkError. Renewing a refused token is the caller's.
   */
  async send<T>(
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
  return new RegistryError({
    status: response.status,
    code: typeof body?.code === 'string' ? body.code : `HTTP_${response.status}`,
    error: typeof body?.error === 'string' ? body.error : response.statusText,
    details: typeof body?.details === 'string' ? body.details : text.slice(0, 500),
    requestId,
    body,
  });
}
