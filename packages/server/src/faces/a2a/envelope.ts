/**
 * The JSON-RPC 2.0 envelope, checked before the A2A SDK's transport handler sees the body: the SDK answers
 * a bad envelope with -32602 (invalid params), where JSON-RPC 2.0 section 5.1 prescribes -32600 (invalid
 * request) and, for a body that is not JSON at all, -32700 (parse error).
 */

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export type JsonRpcId = string | number | null;

export interface JsonRpcErrorAnswer {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string };
}

export const jsonRpcError = (id: JsonRpcId, code: number, message: string): JsonRpcErrorAnswer => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

const isId = (value: unknown): value is JsonRpcId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || value === null;

/** The request's id when it is a valid one, else null (JSON-RPC answers an unreadable id with null). */
export function requestId(body: unknown): JsonRpcId {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as Record<string, unknown>).id;
  return isId(id) ? id : null;
}

/** Why the body is not a JSON-RPC 2.0 request object, as an answer; undefined when it is one. */
export function invalidEnvelope(body: unknown): JsonRpcErrorAnswer | undefined {
  const invalid = (why: string) =>
    jsonRpcError(requestId(body), INVALID_REQUEST, `Invalid Request: ${why} (JSON-RPC 2.0 section 4)`);
  if (Array.isArray(body)) {
    return invalid(
      body.length === 0
        ? 'the batch is empty'
        : 'batches are not accepted: send one request object per HTTP request',
    );
  }
  if (typeof body !== 'object' || body === null) return invalid('the body must be a JSON object');
  const request = body as Record<string, unknown>;
  if (request.jsonrpc !== '2.0') return invalid('"jsonrpc" must be exactly "2.0"');
  if (typeof request.method !== 'string' || request.method === '') {
    return invalid('"method" must be a non-empty string');
  }
  if ('id' in request && !isId(request.id)) return invalid('"id" must be a string, a number or null');
  if ('params' in request && (typeof request.params !== 'object' || request.params === null)) {
    return invalid('"params" must be an object');
  }
  return undefined;
}

/** Fastify's refusals of a body that is not JSON (unparseable, or empty with a JSON content type). */
export function isUnparseableBody(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY';
}
