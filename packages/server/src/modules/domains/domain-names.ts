import net from 'node:net';
import { BadRequestError } from '../../kernel/errors.js';

/** A claimed domain as the registry keeps it, and where its proofs are looked for. */
export interface ClaimedDomain {
  /** Lowercase host name, with `:port` only where ports are allowed. */
  domain: string;
  host: string;
}

export const DOMAIN_MAX_LENGTH = 253;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PORT = /^[1-9][0-9]{0,4}$/;

const invalidDomain = (details: string): BadRequestError => new BadRequestError('INVALID_DOMAIN', details);

/**
 * A host name of two labels or more (letters, digits, hyphens; IDNs in their xn-- form), lowercased and
 * without a trailing dot. IP addresses are refused: a domain is proven by its name. `allowPort` (the
 * development setting DOMAIN_PROOF_ALLOW_HTTP) accepts `host:port`.
 */
export function parseDomain(raw: string, allowPort: boolean): ClaimedDomain {
  const text = raw.trim().toLowerCase().replace(/\.$/, '');
  if (text.includes('/') || text.includes('@')) {
    throw invalidDomain(
      `domain "${raw.slice(0, 80)}" must be a bare host name such as example.com, without scheme or path`,
    );
  }
  const colon = text.lastIndexOf(':');
  let host = text;
  if (colon !== -1) {
    const port = text.slice(colon + 1);
    host = text.slice(0, colon);
    if (!allowPort) throw invalidDomain('domain must not carry a port: proofs are fetched from port 443');
    if (!PORT.test(port) || Number(port) > 65_535)
      throw invalidDomain(`port ${port.slice(0, 8)} is not a port number`);
  }
  if (net.isIP(host) !== 0 || host.startsWith('[')) {
    throw invalidDomain('domain must be a host name, not an IP address');
  }
  if (host.length === 0 || host.length > DOMAIN_MAX_LENGTH) {
    throw invalidDomain(`domain must be a host name of 1 to ${DOMAIN_MAX_LENGTH} characters`);
  }
  const labels = host.split('.');
  if (labels.length < 2)
    throw invalidDomain(`domain "${host}" must have at least two labels, such as example.com`);
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    throw invalidDomain(
      `domain label "${bad.slice(0, 64)}" must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen (write IDNs as xn--)`,
    );
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1] as string))
    throw invalidDomain('the last label of a domain cannot be all digits');
  return { domain: text, host };
}

/** The host of a kept domain (its `:port`, if any, removed). */
export function hostOf(domain: string): string {
  const colon = domain.lastIndexOf(':');
  return colon === -1 ? domain : domain.slice(0, colon);
}

/** `translator.example.com` -> `com.example.translator`: the namespace of handles under a domain. */
export function reverseDns(host: string): string {
  return host.split('.').reverse().join('.');
}

export const HANDLE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const HANDLE_MAX_LENGTH = DOMAIN_MAX_LENGTH + 1 + 64;

/** A handle split into the reverse-DNS namespace (as the host it names) and the name. */
export function parseHandle(raw: string): { handle: string; host: string; name: string } {
  const handle = raw.trim().toLowerCase();
  const slash = handle.indexOf('/');
  const invalid = () =>
    new BadRequestError(
      'INVALID_HANDLE',
      `handle "${raw.slice(0, 80)}" must be <reverse-DNS of a verified domain>/<name>, e.g. com.example/translator; the name is 1 to 64 of a-z, 0-9, ".", "_", "-", starting with a letter or digit`,
    );
  if (slash <= 0 || handle.length > HANDLE_MAX_LENGTH) throw invalid();
  const namespace = handle.slice(0, slash);
  const name = handle.slice(slash + 1);
  if (!HANDLE_NAME.test(name)) throw invalid();
  const labels = namespace.split('.');
  if (labels.length < 2 || labels.some((label) => !LABEL.test(label))) throw invalid();
  return { handle, host: reverseDns(namespace), name };
}
