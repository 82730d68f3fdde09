/**
 * Redirects out of the API into a private network. An API on the public internet that answers
 * with `Location: http://169.254.169.254/…` (a cloud's metadata service) or
 * `http://127.0.0.1:6379/` would have the agent's machine make that request — with a 307, the
 * same method and body — and hand the answer to the model. A hop to another origin is therefore
 * refused when its host is loopback, private, link-local or otherwise not public, unless the
 * API's own host is not public either (a local or intranet API redirecting within its network).
 *
 * Host names are resolved here, every address checked, before fetch connects; fetch resolves the
 * name again, so a DNS server that answers differently the second time (rebinding) is not
 * caught — the ranges below are the same as `@agent/tools-web`'s network guard, which checks at
 * connect time. `node:net` and `node:dns` are loaded only when a redirect leaves the API, so the
 * package still loads where they do not exist (and there the check fails closed).
 */

/** Resolves a host name to all its addresses (injectable for tests). */
export type HostLookup = (hostname: string) => Promise<readonly string[]>;

type Ranges = readonly (readonly [string, number])[];

const ranges: readonly (readonly [string, Ranges, Ranges])[] = [
  ['a loopback address', [['127.0.0.0', 8]], [['::1', 128]]],
  [
    'a private-network address',
    [
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
      ['100.64.0.0', 10],
    ],
    [['fc00::', 7]],
  ],
  [
    'a link-local address (cloud metadata services live here)',
    [['169.254.0.0', 16]],
    [['fe80::', 10]],
  ],
  [
    'a reserved, multicast or unspecified address',
    [
      ['0.0.0.0', 8],
      ['192.0.0.0', 24],
      ['192.0.2.0', 24],
      ['198.18.0.0', 15],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
      ['224.0.0.0', 4],
      ['240.0.0.0', 4],
    ],
    [
      ['::', 128],
      ['ff00::', 8],
      ['fec0::', 10],
      ['2001:db8::', 32],
      ['100::', 64],
    ],
  ],
  [
    'an IPv6 address that embeds an IPv4 address (which may be a private one)',
    [],
    [
      // IPv4-compatible and -translated forms. IPv4-mapped ones (::ffff:a.b.c.d) are matched
      // against the IPv4 ranges above by BlockList itself (::ffff:8.8.8.8 is public).
      ['::', 96],
      ['::ffff:0:0:0', 96],
      ['64:ff9b::', 96],
      ['64:ff9b:1::', 48],
      ['2001::', 32],
      ['2002::', 16],
    ],
  ],
];

type Net = typeof import('node:net');
let lists: Promise<{ net: Net; lists: [import('node:net').BlockList, string][] }> | undefined;

function blockLists() {
  lists ??= import('node:net').then((net) => ({
    net,
    lists: ranges.map(([reason, v4, v6]) => {
      const list = new net.BlockList();
      for (const [network, prefix] of v4) list.addSubnet(network, prefix, 'ipv4');
      for (const [network, prefix] of v6) list.addSubnet(network, prefix, 'ipv6');
      return [list, reason] as [import('node:net').BlockList, string];
    }),
  }));
  return lists;
}

const systemLookup: HostLookup = async (hostname) => {
  const dns = await import('node:dns/promises');
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
};

/**
 * Why `hostname` (a URL's hostname: an IP literal, IPv6 in brackets, or a name) is not a public
 * host, or `undefined` when every address it has is public. A name that does not resolve is
 * `undefined`: fetch will fail on it anyway.
 */
export async function nonPublicHostReason(
  hostname: string,
  lookup: HostLookup = systemLookup,
): Promise<string | undefined> {
  const { net, lists: checks } = await blockLists();
  const host = hostname.replace(/^\[|\]$/g, '');
  const classify = (address: string) => {
    const family = net.isIP(address);
    if (family === 0) return undefined;
    for (const [list, reason] of checks)
      if (list.check(address, family === 4 ? 'ipv4' : 'ipv6')) return reason;
    return undefined;
  };
  if (net.isIP(host) !== 0) {
    const reason = classify(host);
    return reason === undefined ? undefined : `${host} is ${reason}`;
  }
  let addresses: readonly string[];
  try {
    addresses = await lookup(host);
  } catch {
    return undefined;
  }
  for (const address of addresses) {
    const reason = classify(address);
    if (reason !== undefined) return `${host} resolves to ${address}, ${reason}`;
  }
  return undefined;
}

/**
 * A check for {@link fetchScoped}'s hops: the reason to refuse a hop from the API (`start`) to
 * `target` on another origin, or `undefined` to follow it.
 */
export function createRedirectGuard(
  lookup?: HostLookup,
): (start: URL, target: URL) => Promise<string | undefined> {
  return async (start, target) => {
    try {
      const reason = await nonPublicHostReason(target.hostname, lookup);
      if (reason === undefined) return undefined;
      // An API that is itself on a private network may send its callers around that network.
      if ((await nonPublicHostReason(start.hostname, lookup)) !== undefined) return undefined;
      return reason;
    } catch {
      // No node:net or node:dns here: the host cannot be checked, so the hop is not made.
      return 'its host cannot be checked in this runtime';
    }
  };
}
