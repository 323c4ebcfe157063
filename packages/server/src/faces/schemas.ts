import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import { BadRequestError } from '../kernel/errors.js';
import { COMPONENT_SCHEMAS } from './rest/openapi/components.js';

export type JsonSchema = Record<string, unknown>;

/** The same Ajv settings as REST bodies (app.ts): JSON types are not coerced, defaults are filled in. */
const ajv = new Ajv({ strict: false, useDefaults: true, removeAdditional: false, coerceTypes: false });

/** Every named component (ErrorResponse, Capability, AgentProfile, SearchHit...), to inline where a route refers to it. */
const SHARED: Record<string, JsonSchema> = Object.fromEntries(
  COMPONENT_SCHEMAS.map((schema) => [schema.$id as string, withoutId(plain(schema))]),
);

function plain(schema: TSchema): JsonSchema {
  // JSON text drops TypeBox's symbol keys, leaving the JSON Schema the REST routes publish.
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

function withoutId(schema: JsonSchema): JsonSchema {
  const { $id: _id, ...rest } = schema;
  return rest;
}

function inlineRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inlineRefs);
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && SHARED[ref] !== undefined) return inlineRefs(SHARED[ref]);
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, inlineRefs(member)]));
}

/**
 * A route schema as a self-contained JSON Schema: protocol clients (MCP's, A2A's) compile tool and
 * skill schemas on their own, without the registry's shared `$ref` targets.
 */
export function selfContained(schema: TSchema): JsonSchema {
  return inlineRefs(plain(schema)) as JsonSchema;
}

/** Validates arguments with the very schema the REST route validates its body or query with. */
export class ArgumentValidator<T> {
  private readonly validate: ValidateFunction;

  constructor(readonly schema: JsonSchema) {
    this.validate = ajv.compile(schema);
  }

  /** The arguments (with defaults filled in), or a 400 VALIDATION_FAILED naming the field. */
  parse(args: unknown): T {
    const value = args ?? {};
    if (this.validate(value)) return value as T;
    const issue = this.validate.errors?.[0];
    const path = issue?.instancePath.split('/').slice(1).join('.') ?? '';
    const allowed = issue?.keyword === 'enum' ? (issue.params as { allowedValues?: unknown[] }) : undefined;
    const message =
      allowed?.allowedValues !== undefined
        ? // A value accepted as a JSON boolean and as its string form is named once.
          `must be one of: ${[...new Set(allowed.allowedValues.map(String))].join(', ')}`
        : (issue?.message ?? 'is invalid');
    throw new BadRequestError('VALIDATION_FAILED', `${path === '' ? 'arguments' : path} ${message}`);
  }
}
