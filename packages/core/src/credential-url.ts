// A URL as a person may see it: in a warning, an error, a log line. People paste URLs that carry
// their keys (`?api_key=…`, `https://user:password@host/…`); the terminal, a CI log or a bug
// report is no place for them.
import { credentialRuleOf } from './credential-environment.js';

/** Query names of signed URLs (S3, GCS, Azure SAS): the signature is the key to the object. */
const signedUrlParameter =
  /^(?:sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)$/i;

/**
 * `url` with its password and each query value that holds a credential (by the name — `api_key`,
 * `token`, `sig` … — or by the value's own shape) replaced by `***`; the user name, host, path
 * and other query values kept, so the URL is still recognisable. Text that is not a URL comes
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
    if (!signedUrlParameter.test(name) && credentialRuleOf(name, value) === undefined) continue;
    parsed.searchParams.set(name, '***');
    changed = true;
  }
  // Unchanged, the text stays as given (no normalising of what held nothing secret).
  return changed ? parsed.href : url;
}
