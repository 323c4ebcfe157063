const ANNOTATION = 'x-checked-by-service';
const prepared = new WeakMap<object, unknown>();

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (typeof node !== 'object' || node === null) return node;
  const record = node as Record<string, unknown>;
  const skipped = new Set(Array.isArray(record[ANNOTATION]) ? (record[ANNOTATION] as string[]) : []);
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === ANNOTATION || skipped.has(key)) continue;
    copy[key] = strip(value);
  }
  return copy;
}

/**
 * The schema the request validator compiles: constraints marked `x-checked-by-service` are left to
 * the service, which answers them with a message naming the fix. The document keeps them.
 */
export function forValidation<T>(schema: T): T {
  if (typeof schema !== 'object' || schema === null) return schema;
  let copy = prepared.get(schema);
  if (copy === undefined) {
    copy = strip(schema);
    prepared.set(schema, copy);
  }
  return copy as T;
}
