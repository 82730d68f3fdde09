// What HTTP lets a header or cookie be called and what a cookie value may hold, checked where the
// document or the options name one, so a name no request could carry is reported at load rather
// than as `Headers`' TypeError when a tool is called.

// RFC 9110 §5.6.2: token = 1*tchar; RFC 6265 §4.1.1 takes the same token for a cookie's name.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** True when `name` can be a header field or cookie name (an RFC 9110 token). */
export function isHttpToken(name: string): boolean {
  return token.test(name);
}

/** Why `name` is not a header or cookie name, for an error message. */
export function httpTokenProblem(name: string): string {
  return `${JSON.stringify(name)} is not an HTTP token (letters, digits and !#$%&'*+-.^_\`|~ only; no spaces, colons or other characters), so no request can carry it`;
}

/**
 * Why `value` cannot be sent as a cookie value as it is, or `undefined`. RFC 6265 §4.1.1
 * cookie-octets: visible ASCII except `"` `,` `;` `\`; a `;` would end the cookie and start
 * another one named by what follows.
 */
export function cookieValueProblem(value: string): string | undefined {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code === 0x3b) return 'it holds ";", which would end the cookie';
    if (code === 0x22 || code === 0x2c || code === 0x5c)
      return `it holds ${JSON.stringify(value[index])}, which a cookie value may not hold`;
    if (code <= 0x20 || code >= 0x7f)
      return 'it holds a space, a control character or a character outside ASCII, which a cookie value may not hold';
  }
  return undefined;
}
