import * as dns from 'node:dns';
import * as net from 'node:net';

/** Why an address is not public, or `undefined` when it is. */
export function privateAddressReason(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // BlockList matches IPv4-mapped IPv6 (`::ffff:127.0.0.1`) against the IPv4 ranges too.
  for (const [list, reason] of blockLists) if (list.check(address, type)) return reason;
  return undefined;
}

function blockList(ranges: readonly [string, number, 'ipv4' | 'ipv6'][]): net.BlockList {
  const list = new net.BlockList();
  for (const [network, prefix, type] of ranges) list.addSubnet(network, prefix, type);
  return list;
}

const blockLists: readonly [net.BlockList, string][] = [
  [
    blockList([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
    'a loopback address',
  ],
  [
    blockList([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ]),
    'a private-network address',
  ],
  [
    blockList([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
    'a link-local address (cloud metadata services live here)',
  ],
  [
    blockList([
      ['0.0.0.0', 8, 'ipv4'],
      ['192.0.0.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['224.0.0.0', 4, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
      ['::', 128, 'ipv6'],
      ['ff00::', 8, 'ipv6'],
      // IANA IPv4 special-purpose registry: documentation, AS112, AMT, the 6to4 relay anycast.
      ['192.0.2.0', 24, 'ipv4'],
      ['192.31.196.0', 24, 'ipv4'],
      ['192.52.193.0', 24, 'ipv4'],
      ['192.88.99.0', 24, 'ipv4'],
      ['192.175.48.0', 24, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      // IPv6 special-purpose registry: discard-only, IETF protocol assignments (incl. Teredo
      // 2001::/32), documentation, SRv6 SIDs, deprecated site-local.
      ['100::', 64, 'ipv6'],
      ['2001::', 23, 'ipv6'],
      ['2001:db8::', 32, 'ipv6'],
      ['3fff::', 20, 'ipv6'],
      ['5f00::', 16, 'ipv6'],
      ['fec0::', 10, 'ipv6'],
    ]),
    'a reserved, multicast or unspecified address',
  ],
  [
    // Addresses that carry an IPv4 address a translator or tunnel may deliver to — including a
    // private one (NAT64 `64:ff9b::10.0.0.1` reaches 10.0.0.1): refused whatever they embed.
    blockList([
      ['64:ff9b::', 96, 'ipv6'],
      ['64:ff9b:1::', 48, 'ipv6'],
      ['::', 96, 'ipv6'],
      ['::ffff:0:0:0', 96, 'ipv6'],
      ['2001::', 32, 'ipv6'],
      ['2002::', 16, 'ipv6'],
    ]),
    'an IPv6 address that embeds an IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible or -translated), which may be a private one',
  ],
];

/** Thrown by the guarded lookup when a host resolves to a non-public address. */
export class PrivateAddressError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${host} resolves to ${address}, ${reason}`);
    this.name = 'PrivateAddressError';
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A DNS lookup with the `all: true` form of `dns.lookup` (injectable for tests and custom resolvers). */
export type DnsLookup = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

/** Lets a non-public address through for a host (an intranet docs server, say). */
export type PrivateAddressFilter = (hostname: string, address: string) => boolean;

/**
 * A `lookup` for `http.request` that resolves every address of the host and fails when any one is
 * not public (unless `allow` lets it through). Checking at connect time, not before, means a DNS
 * answer that changes between a check and the connection (rebinding) cannot slip a private
 * address through; every redirect connects, so it is checked again.
 */
export function createGuardedLookup(options: {
  lookup?: DnsLookup | undefined;
  allow?: PrivateAddressFilter | undefined;
}) {
  const lookup: DnsLookup =
    options.lookup ??
    ((hostname, lookupOptions, callback) => dns.lookup(hostname, lookupOptions, callback));
  return (hostname: string, lookupOptions: dns.LookupOptions, callback: LookupCallback): void => {
    lookup(hostname, { all: true }, (error, found) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      const family =
        lookupOptions.family === 'IPv4'
          ? 4
          : lookupOptions.family === 'IPv6'
            ? 6
            : lookupOptions.family;
      const addresses =
        family === 4 || family === 6 ? found.filter((entry) => entry.family === family) : found;
      for (const entry of addresses) {
        const reason = privateAddressReason(entry.address);
        if (reason !== undefined && options.allow?.(hostname, entry.address) !== true) {
          callback(new PrivateAddressError(hostname, entry.address, reason), []);
          return;
        }
      }
      if (lookupOptions.all === true) {
        callback(null, addresses);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
        return;
      }
      callback(null, first.address, first.family);
    });
  };
}
