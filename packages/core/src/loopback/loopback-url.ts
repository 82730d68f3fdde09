/**
 * The port of a URL on this machine's loopback interface (`127.0.0.0/8`, `[::1]`, `localhost`
 * and its subdomains), its scheme's default when it names none; undefined for any other URL (or
 * text that is not one). Such a port is any local user's to listen on while the server meant to
 * be there is not: see {@link foreignListener}.
 */
export function loopbackPort(url: string | URL): number | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url.trim()) : url;
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback =
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
  if (!loopback) return undefined;
  return Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
}
