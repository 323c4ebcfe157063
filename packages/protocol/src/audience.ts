/**
 * The name a registry is known by in signed messages and tokens: the origin of its public URL
 * (scheme, host and port when not the default; no path, no trailing slash), e.g.
 * `https://registry.example` or `http://localhost:8080`.
 */
export function registryAudience(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`registry URL "${url}" is not a URL (expected e.g. https://registry.example)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`registry URL "${url}" must be http or https`);
  }
  return parsed.origin;
}
