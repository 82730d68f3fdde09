/**
 * The port of a URL that connects to this machine itself — `127.0.0.0/8`, `[::1]`, `localhost`
 * and its subdomains, and the spellings that reach them too: `0.0.0.0` and `[::]` (a connection
 * to the unspecified address goes to this host: `OPENAI_BASE_URL=http://0.0.0.0:11434/v1`, copied
 * from an `OLLAMA_HOST`), IPv4-mapped loopback (`[::ffff:127.0.0.1]`) — its scheme's default when
 * it names none; undefined for any other URL (or text that is not one). Such a port is any local
 * user's to listen on while the server meant to be there is not: see {@link foreignListener}.
 */
export function loopbackPort(url: string | URL): number | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url.trim()) : url;
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // The URL parser has written every IPv4 spelling (`127.1`, `0x7f.1`, `0`) as dotted decimal,
  // and IPv6 compressed (`::ffff:127.0.0.1` as `::ffff:7f00:1`).
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    host === '::' ||
    host === '0.0.0.0' ||
    /^127\./.test(host) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host) ||
    /^::ffff:0:0$/.test(host);
  if (!loopback) return undefined;
  return Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
}
