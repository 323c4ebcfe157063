import { Type, type Static, type StringOptions, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from '../kernel/error-codes.js';

/** `type: [T, "null"]` rather than anyOf: clearer validation messages and plain OpenAPI 3.1. */
export const Nullable = <T extends TSchema>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });

/** A string of one of `values`, typed as their union: an `enum` in the document, where a union of literals would write anyOf. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: StringOptions = {}) =>
  Type.Unsafe<T[number]>(Type.String({ enum: [...values], ...options }));

export const ErrorResponse = Type.Object(
  {
    error: Type.String({ description: 'Short title' }),
    details: Type.String({ description: 'What went wrong and how to fix it' }),
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: [...ERROR_CODES],
      description: 'Stable machine-readable code, e.g. INVALID_SIGNATURE',
    }),
    task_id: Type.Optional(Type.String({ description: 'The task, when an invocation failed or timed out' })),
    offline_since: Type.Optional(
      Type.String({
        description:
          'INVOCATION_TIMEOUT answered at once: the agent is offline, the task was not sent and no answer will come; when a worker of it was last seen (ISO 8601). Absent when the task was sent and the agent did not answer in time (docs/availability.md)',
      }),
    ),
    home_registry: Type.Optional(
      Type.String({ description: 'AGENT_IS_REMOTE: the registry the agent lives at (docs/federation.md)' }),
    ),
    invoke_url: Type.Optional(Type.String({ description: 'AGENT_IS_REMOTE: where to invoke it there' })),
    remote_entry: Type.Optional(
      Type.String({
        description: 'AGENT_IS_REMOTE: the id of its entry here (GET /api/federation/entries/{id})',
      }),
    ),
  },
  { $id: 'ErrorResponse', description: 'Every error of every endpoint has this shape' },
);

export const errorRef = Type.Ref('ErrorResponse');

/** Error responses for a route, for the OpenAPI document; the error handler produces the body. */
export const errors = (...statuses: number[]): Record<number, typeof errorRef> =>
  Object.fromEntries(statuses.map((status) => [status, errorRef]));

export const DidParams = Type.Object({
  did: Type.String({ description: 'The DID, URL-encoded or raw (did:web:... or did:pkh:...)' }),
});

export const bearerAuth = [{ bearerAuth: [] }];

/** Any JSON object, typed as a record: the bare schema's static type, `{}`, would admit any value but null. */
export const JsonObject = Type.Unsafe<Record<string, unknown>>(
  Type.Object({}, { additionalProperties: true }),
);

/** A reference to a named component schema (it must be in COMPONENT_SCHEMAS), typed as the schema. */
export const ref = <T extends TSchema & { $id?: string }>(schema: T) => {
  if (schema.$id === undefined) throw new Error('only schemas with an $id can be referenced');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
};

/**
 * Constraints the service checks itself, with a message that names the fix (e.g. a 0x-prefixed key):
 * they are in the document, and the request validator leaves them to the service.
 */
export const checkedByService = <T extends TSchema>(schema: T, keywords: string[]): T =>
  ({ ...schema, 'x-checked-by-service': keywords }) as T;
