import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to its addresses; tests inject one to simulate DNS rebinding. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export class ForbiddenWebhookTargetError extends Error {}

/**
 * Only globally routable unicast addresses are public: loopback, private, link-local (which holds
 * the 169.254.169.254 metadata service), unique-local, carrier-grade NAT, multicast, reserved and
 * translation ranges are not. IPv4-mapped IPv6 is judged by its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address();
  // Global unicast IPv6 is 2000::/3; anything else (e.g. IPv4-compatible ::/96) is not an internet host.
  if (parsed instanceof ipaddr.IPv6 && !parsed.match(GLOBAL_UNICAST_V6)) return false;
  return parsed.range() === 'unicast';
}

const GLOBAL_UNICAST_V6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];

const bareHost = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, '$1');

/** Where webhooks may go: public addresses only, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set. */
export class WebhookNetworkPolicy {
  constructor(
    private readonly allowPrivateNetworks: boolean,
    private readonly resolve: HostResolver = systemResolver,
  ) {}

  /**
   * At configuration: refuse a URL whose host is, or resolves to, a non-public address. A name that
   * does not resolve yet is accepted; delivery checks again after resolving.
   */
  async checkConfiguredUrl(url: URL): Promise<void> {
    if (this.allowPrivateNetworks) return;
    const host = bareHost(url.hostname);
    let addresses: string[];
    if (net.isIP(host) !== 0) {
      addresses = [host];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch {
        return;
      }
    }
    this.assertPublic(host, addresses);
  }

  /** At delivery: the address to connect to, checked after resolution, so DNS rebinding cannot slip in. */
  async resolveForDelivery(hostname: string): Promise<{ address: string; family: 4 | 6 }> {
    const host = bareHost(hostname);
    const addresses = net.isIP(host) !== 0 ? [host] : await this.resolve(host);
    if (addresses.length === 0) throw new Error(`${host} does not resolve`);
    if (!this.allowPrivateNetworks) this.assertPublic(host, addresses);
    const address = addresses[0] as string;
    return { address, family: net.isIPv6(address) ? 6 : 4 };
  }

  /** At delivery, for a URL whose host is an IP literal: sockets never call `lookup` for those. */
  assertDeliverableLiteral(url: URL): void {
    const host = bareHost(url.hostname);
    if (net.isIP(host) !== 0 && !this.allowPrivateNetworks) this.assertPublic(host, [host]);
  }

  /** A net/http `lookup` that connects only to the address just checked. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolveForDelivery(hostname).then(
      ({ address, family }) => {
        if (options.all === true) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };

  private assertPublic(host: string, addresses: string[]): void {
    const blocked = addresses.find((address) => !isPublicAddress(address));
    if (blocked !== undefined) {
      throw new ForbiddenWebhookTargetError(
        `${host} resolves to ${blocked}, a loopback, private, link-local or otherwise non-public address; ` +
          'the registry must reach webhooks over the public Internet. For local development, the registry operator ' +
          'can set ALLOW_PRIVATE_NETWORKS=true',
      );
    }
  }
}
