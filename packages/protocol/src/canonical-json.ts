import canonicalizeModule from 'canonicalize';

// The package is CommonJS exporting the function itself (the default import in Node and in bundlers);
// its typings claim an ES default export, which NodeNext resolution reads as a namespace.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

/**
 * RFC 8785 JSON Canonicalization Scheme: keys sorted at every level, no whitespace, arrays in order.
 * For the messages we sign this is exactly the rule of section 5.1 of the interface.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}
