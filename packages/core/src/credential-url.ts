// A URL as a person may see it: in a warning, an error, a log line. People paste URLs that carry
// their keys (`?api_key=…`, `https://user:password@host/…`); the terminal, a CI log or a bug
// report is no place for them.
import { credentialRuleOf } from './credential-environment.js';
import { urlPathKeys, withoutPathKeys } from './credential-url-paths.js';

/** Query names of signed URLs (S3, GCS, Azure SAS): the signature is the key to the object. */
const signedUrlParameter =
  /^(?:sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)$/i;

/** Whether a query parameter holds a credential: by its name, a signed URL's, or its value's shape. */
function isCredentialParameter(name: string, value: string): boolean {
  return signedUrlParameter.test(name) || credentialRuleOf(name, value) !== undefined;
}

/**
 * `url` with its password, each query value that holds a credential (by the name — `api_key`,
 * `token`, `sig` … — or by the value's own shape) and a key in its path (a webhook's, a bot's:
 * `credential-url-paths.ts`) replaced by `***`; the user name, host, rest of the path and other
 * query values kept, so the URL is still recognisable. Text that is not a URL comes
 * back as it is.
 */
export function urlWithoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  let changed = false;
  if (parsed.password !== '') {
    parsed.password = '***';
    changed = true;
  }
  for (const [name, value] of [...parsed.searchParams]) {
    if (!isCredentialParameter(name, value)) continue;
    parsed.searchParams.set(name, '***');
    changed = true;
  }
  // A webhook's or a bot's key in the path (hooks.slack.com/services/…/<key>).
  const withoutKeys = withoutPathKeys(parsed);
  if (withoutKeys !== undefined) return withoutKeys;
  // Unchanged, the text stays as given (no normalising of what held nothing secret).
  return changed ? parsed.href : url;
}

/**
 * The credentials inside a URL (found anywhere in `text`: a base URL, a connection string): its
 * password, the query values and the path keys {@link urlWithoutCredentials} hides, each as
 * written and decoded.
 * A server quoting the path and query it was asked for (`no route /v1/chat/completions?key=…`)
 * shows them without the rest of the URL, so a redactor of the whole value misses them.
 */
export function urlCredentialParts(text: string): string[] {
  const parts = new Set<string>();
  // Linear: a scheme is tried only where a run of scheme characters starts.
  const urls = /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>]+/g;
  for (const [candidate] of text.matchAll(urls)) {
    let parsed: URL;
    try {
      parsed = new URL(candidate);
    } catch {
      continue;
    }
    if (parsed.password !== '') addBothForms(parts, parsed.password);
    for (const key of urlPathKeys(parsed)) {
      parts.add(key);
      parts.add(encodeURIComponent(key));
    }
    const query = candidate.includes('?') ? candidate.slice(candidate.indexOf('?') + 1) : '';
    for (const pair of query.split(/[&;#]/)) {
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      const name = decodeQueryPart(pair.slice(0, at));
      const value = pair.slice(at + 1);
      const decoded = decodeQueryPart(value);
      if (isCredentialParameter(name, decoded)) {
        parts.add(value);
        parts.add(decoded);
      }
    }
  }
  return [...parts].filter((part) => part !== '');
}

/** A user-info part as written and decoded (`+` is itself there, not a space). */
function addBothForms(parts: Set<string>, encoded: string): void {
  parts.add(encoded);
  try {
    parts.add(decodeURIComponent(encoded));
  } catch {
    // Not a valid escape: only the form as written exists.
  }
}

/** A query's name or value as `URLSearchParams` reads it; as written when it is no valid escape. */
function decodeQueryPart(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
