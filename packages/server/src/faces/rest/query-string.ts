/**
 * The query-string parser: like the default (`+` is a space, repeated names become arrays), but a
 * value that is not valid percent-encoded UTF-8 is remembered instead of passed on raw, so the
 * request is refused with a 400 naming the parameter (see badlyEncodedParameter).
 */
const badlyEncoded = new WeakMap<object, string>();

function decode(text: string): string | undefined {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

export function parseQueryString(text: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const rawName = equals < 0 ? pair : pair.slice(0, equals);
    const name = decode(rawName);
    const value = decode(equals < 0 ? '' : pair.slice(equals + 1));
    if (name === undefined || value === undefined) {
      if (!badlyEncoded.has(query)) badlyEncoded.set(query, name ?? rawName);
      continue;
    }
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else query[name] = [existing, value];
  }
  return query;
}

/** The first parameter of a parsed query whose name or value was not valid percent-encoded UTF-8. */
export function badlyEncodedParameter(query: unknown): string | undefined {
  return typeof query === 'object' && query !== null ? badlyEncoded.get(query) : undefined;
}
