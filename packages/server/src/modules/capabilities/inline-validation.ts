/**
 * Which invocation inputs are checked against their capability's input_schema on the event loop, instead
 * of in a validation worker. A worker costs a thread hand-off each way, in every invocation's latency; it
 * is there for the validations without a small bound (recursion through `$ref`, pairwise `uniqueItems`,
 * inputs of a megabyte), which it can stop at their time limit.
 *
 * Without a reference, a schema is a finite tree and each of its keywords is evaluated at most once per value
 * of the input (an `items` subschema once per item, each `anyOf` branch once per value it applies to), each
 * step costing at most the keyword's own size (an `enum`'s values, a `const`) or the string it reads
 * (patterns run on a linear-time engine). So a schema of at most `schemaMaxValues` JSON values checked
 * against at most `inputMaxChars` characters of input is at most about 32 × 4,096 steps: the order of parsing
 * the request body, which the event loop does anyway (docs/decisions/limits.md, "Small inputs validated on
 * the event loop").
 */
export const INLINE_VALIDATION = {
  /** JSON values (objects, arrays, strings, numbers, booleans, nulls) in the whole schema document. */
  schemaMaxValues: 32,
  /** Characters of the input's JSON text. */
  inputMaxChars: 4096,
} as const;

/** Keywords whose cost is not bounded by the schema's size times the input's: recursion, pairwise checks. */
const UNBOUNDED_KEYWORDS = new Set([
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  'uniqueItems',
  'unevaluatedProperties',
  'unevaluatedItems',
]);

/**
 * True when checking any input of at most `inputMaxChars` against this schema is bounded work: no
 * keyword from UNBOUNDED_KEYWORDS anywhere (conservatively, also as a property name) and at most
 * `schemaMaxValues` JSON values. Stops at the first value over the limit, so a large schema costs no more.
 */
export function validatesInBoundedTime(schema: unknown): boolean {
  let values = 0;
  const bounded = (node: unknown): boolean => {
    if (++values > INLINE_VALIDATION.schemaMaxValues) return false;
    if (typeof node !== 'object' || node === null) return true;
    if (Array.isArray(node)) return node.every(bounded);
    for (const [key, value] of Object.entries(node)) {
      if (UNBOUNDED_KEYWORDS.has(key) || !bounded(value)) return false;
    }
    return true;
  };
  return bounded(schema);
}
