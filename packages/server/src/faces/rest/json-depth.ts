/** Deepest nesting accepted in a JSON body; recursion in JSON tooling overflows long before 10,000. */
export const MAX_JSON_DEPTH = 64;

/**
 * Nesting depth of JSON text, by one pass over its characters (strings skipped). Run before
 * JSON.parse so a body of `[[[[...` is a 400 instead of a stack overflow further on.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++;
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x7b || char === 0x5b) {
      if (++depth > limit) return true;
    } else if (char === 0x7d || char === 0x5d) {
      depth--;
    }
  }
  return false;
}
