import { BadRequestError } from '../../kernel/errors.js';
import type { Capability } from '@agent-registry/protocol';

/**
 * How big and how complex published capability schemas may be. Compiling a schema costs CPU on the
 * event loop roughly in proportion to its subschemas (about 0.2 ms each), so these bound the work one
 * registration or profile update can ask for. Stated in docs/operations.md and the OpenAPI document.
 */
export const SCHEMA_LIMITS = {
  /** Serialised JSON of one input_schema or output_schema, in UTF-8 bytes. */
  schemaMaxBytes: 16 * 1024,
  /** Member names under `properties` and `patternProperties` in one schema, at every level. */
  schemaMaxProperties: 128,
  /** JSON objects in one schema document (each subschema, each properties map). */
  schemaMaxSubschemas: 256,
  /** Nesting depth of one schema document's JSON (`{"a":{}}` is 2). */
  schemaMaxDepth: 16,
  /** All schemas of one profile together. */
  profileSchemaMaxBytes: 64 * 1024,
  profileSchemaMaxProperties: 512,
  profileSchemaMaxSubschemas: 512,
  /**
   * `uniqueItems` compares every pair of items unless the items are declared scalars (then a hash
   * set does it in one pass); without such `items`, the array must declare `maxItems` at most this.
   */
  uniqueItemsMaxItems: 32,
} as const;

interface SchemaMeasure {
  properties: number;
  subschemas: number;
  depth: number;
  /** Where `uniqueItems` is used without a bound, as a JSON pointer. */
  unboundedUniqueItems?: string;
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

function declaresScalarItems(items: unknown): boolean {
  if (typeof items !== 'object' || items === null || Array.isArray(items)) return false;
  const { type } = items as { type?: unknown };
  const types = Array.isArray(type) ? type : [type];
  return types.length > 0 && types.every((t) => typeof t === 'string' && SCALAR_TYPES.has(t));
}

function uniqueItemsIsBounded(schema: Record<string, unknown>): boolean {
  if (declaresScalarItems(schema.items)) return true;
  const { maxItems } = schema;
  return typeof maxItems === 'number' && maxItems <= SCHEMA_LIMITS.uniqueItemsMaxItems;
}

/** One pass over the schema document; stops descending past the depth limit so the walk stays bounded. */
function measure(schema: unknown): SchemaMeasure {
  const result: SchemaMeasure = { properties: 0, subschemas: 0, depth: 0 };
  const visit = (node: unknown, depth: number, pointer: string): void => {
    if (typeof node !== 'object' || node === null) return;
    result.depth = Math.max(result.depth, depth);
    if (depth > SCHEMA_LIMITS.schemaMaxDepth) return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => visit(item, depth + 1, `${pointer}/${index}`));
      return;
    }
    result.subschemas++;
    const object = node as Record<string, unknown>;
    for (const keyword of ['properties', 'patternProperties']) {
      const members = object[keyword];
      if (typeof members === 'object' && members !== null && !Array.isArray(members)) {
        result.properties += Object.keys(members).length;
      }
    }
    if (object.uniqueItems === true && !uniqueItemsIsBounded(object)) {
      result.unboundedUniqueItems ??= pointer === '' ? '/' : pointer;
    }
    for (const [key, value] of Object.entries(object)) {
      visit(value, depth + 1, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  };
  visit(schema, 1, '');
  return result;
}

function tooLarge(where: string, what: string): BadRequestError {
  return new BadRequestError(
    'CAPABILITY_SCHEMA_TOO_LARGE',
    `${where} ${what}`,
    'Capability schema too large',
  );
}

/**
 * Size and complexity of every capability schema, checked in one cheap pass before anything compiles:
 * a 400 CAPABILITY_SCHEMA_TOO_LARGE naming the schema and the limit, or INVALID_CAPABILITY_SCHEMA for an
 * unbounded uniqueItems.
 */
export function assertSchemaBudget(capabilities: readonly Capability[] | null | undefined): void {
  const totals = { bytes: 0, properties: 0, subschemas: 0 };
  const limits = SCHEMA_LIMITS;
  capabilities?.forEach((capability, index) => {
    for (const member of ['input_schema', 'output_schema'] as const) {
      const schema = capability[member];
      if (schema === undefined || schema === null) continue;
      const where = `capabilities[${index}].${member}`;
      const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8');
      if (bytes > limits.schemaMaxBytes) {
        throw tooLarge(where, `is ${bytes} bytes of JSON; at most ${limits.schemaMaxBytes} are accepted`);
      }
      const measured = measure(schema);
      if (measured.depth > limits.schemaMaxDepth) {
        throw tooLarge(where, `nests deeper than ${limits.schemaMaxDepth} levels`);
      }
      if (measured.properties > limits.schemaMaxProperties) {
        throw tooLarge(
          where,
          `declares ${measured.properties} properties; at most ${limits.schemaMaxProperties} are accepted`,
        );
      }
      if (measured.subschemas > limits.schemaMaxSubschemas) {
        throw tooLarge(
          where,
          `has ${measured.subschemas} subschemas; at most ${limits.schemaMaxSubschemas} are accepted`,
        );
      }
      if (measured.unboundedUniqueItems !== undefined) {
        throw new BadRequestError(
          'INVALID_CAPABILITY_SCHEMA',
          `${where} uses uniqueItems at ${measured.unboundedUniqueItems} without a bound: declare scalar item ` +
            `types in "items" or "maxItems" of at most ${limits.uniqueItemsMaxItems}`,
        );
      }
      totals.bytes += bytes;
      totals.properties += measured.properties;
      totals.subschemas += measured.subschemas;
    }
  });
  if (totals.bytes > limits.profileSchemaMaxBytes) {
    throw tooLarge(
      'profile capabilities',
      `carry ${totals.bytes} bytes of schemas; at most ${limits.profileSchemaMaxBytes} in all are accepted`,
    );
  }
  if (totals.properties > limits.profileSchemaMaxProperties) {
    throw tooLarge(
      'profile capabilities',
      `declare ${totals.properties} schema properties; at most ${limits.profileSchemaMaxProperties} in all are accepted`,
    );
  }
  if (totals.subschemas > limits.profileSchemaMaxSubschemas) {
    throw tooLarge(
      'profile capabilities',
      `have ${totals.subschemas} subschemas; at most ${limits.profileSchemaMaxSubschemas} in all are accepted`,
    );
  }
}
