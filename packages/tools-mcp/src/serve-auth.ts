/**
 * The bearer token of `serveHttp`: generated, or read from a file only its owner can read, and
 * checked in constant time. A static token handed out of band, not MCP's OAuth authorization: the
 * protected-resource metadata names no authorization server, because there is none.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AgentError, errorMessage } from '@agent/core';
import { readRegularFile } from '@agent/core/regular-file';

/**
 * How `serveHttp` authenticates requests: clients must send `Authorization: Bearer <token>`, or
 * (`'none'`) anyone who can reach the port may call the tools.
 */
export type HttpServeAuth = { token: string } | 'none';

/** RFC 6750's `b64token`: what fits in an `Authorization: Bearer` header as is. */
const tokenSyntax = /^[A-Za-z0-9\-._~+/]+=*$/;
/** 32 characters: 128 bits as hex, more as base64. */
const minimumTokenLength = 32;
/**
 * Fewer different characters than this and a token is a repetition (`aaaa…`, `0000…`,
 * `passwordpassword…`), not a secret: 32 random hex digits have 14 on average, fewer than 8 about
 * once in 3·10^7; longer or base64 tokens far less (a floor against the guessable, not a measure
 * of entropy).
 */
const minimumDistinctCharacters = 8;
/** A token file larger than this is not a token file. */
const maximumTokenFileBytes = 4096;

/** A new bearer token: 32 bytes from the OS's random source, base64url (43 characters). */
export function generateBearerToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Throws an `AgentError` naming `origin` unless `token` can serve as a bearer token. */
export function assertBearerToken(token: string, origin = 'The bearer token'): void {
  if (typeof token !== 'string' || !tokenSyntax.test(token))
    throw new AgentError(
      `${origin} must be letters, digits and - . _ ~ + / (then = padding), with no spaces`,
    );
  if (token.length < minimumTokenLength)
    throw new AgentError(
      `${origin} is too short for a secret: ${token.length} characters, at least ${minimumTokenLength} (e.g. openssl rand -hex 32)`,
    );
  const distinct = new Set(token).size;
  if (distinct < minimumDistinctCharacters)
    throw new AgentError(
      `${origin} is guessable: it has only ${distinct} different character${distinct === 1 ? '' : 's'}, where a random one has many (e.g. openssl rand -hex 32)`,
    );
}

/**
 * Reads a bearer token (surrounding whitespace trimmed) from a file that only its owner can
 * read: refused, with an `AgentError` naming the file, unless it is a regular file owned by this
 * process's user with no group or other permission bits (0600 or 0400). The checks are made on
 * the opened file, so a swap after them changes nothing. Ownership and mode are not checked on
 * Windows, which has neither.
 */
export async function readBearerTokenFile(path: string): Promise<string> {
  const fail = (why: string): never => {
    throw new AgentError(`The token file ${path} ${why}`);
  };
  const outcome = await readRegularFile(path, {
    maxBytes: maximumTokenFileBytes,
    // Whose and how open the file is, before its size or content.
    check: ({ stats }) => ownershipProblem(stats.uid, stats.mode, path),
  });
  switch (outcome.kind) {
    case 'missing':
    case 'unreadable':
      return fail(`cannot be opened: ${errorMessage(outcome.error)}`);
    case 'not-regular':
      return fail('is not a regular file');
    case 'refused':
      return fail(outcome.reason);
    case 'too-large':
      return fail(`is ${outcome.size} bytes: a token file holds one token`);
    case 'read': {
      const token = outcome.bytes.toString('utf8').trim();
      if (token === '') fail('is empty');
      assertBearerToken(token, `The token in ${path}`);
      return token;
    }
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/** Why a token file of this owner and mode is refused (another user's, or open to others). */
function ownershipProblem(uid: number, mode: number, path: string): string | undefined {
  const ours = process.getuid?.();
  if (ours !== undefined && uid !== ours)
    return `belongs to uid ${uid}, not to this user (uid ${ours}): it must be yours`;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0)
    return `can be read or written by others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): run chmod 600 ${path}`;
  return undefined;
}

/** What a request's `Authorization` header says about the token. */
export type BearerCheckResult = 'valid' | 'missing' | 'invalid';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * A checker of `Authorization` headers against one token. Both sides are hashed first, so
 * `timingSafeEqual` compares two 32-byte digests: the time taken depends on neither the token's
 * length nor on how much of it a guess got right. The scheme name is case-insensitive (RFC 7235).
 */
export function createBearerCheck(
  token: string,
): (header: string | undefined) => BearerCheckResult {
  assertBearerToken(token);
  const expected = digest(token);
  return (header) => {
    if (header === undefined || header === '') return 'missing';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    // Hashed and compared even when malformed: every refusal takes the same path.
    const same = timingSafeEqual(digest(match?.[1] ?? ''), expected);
    return same && match !== null ? 'valid' : 'invalid';
  };
}

/** The well-known path of the metadata of the resource at `resourcePath` (RFC 9728 §3.1). */
export function protectedResourceMetadataPath(resourcePath: string): string {
  const suffix = resourcePath === '/' ? '' : resourcePath.replace(/\/$/, '');
  return `/.well-known/oauth-protected-resource${suffix}`;
}

/**
 * The OAuth 2.0 Protected Resource Metadata (RFC 9728) of a server that takes a static bearer
 * token in the `Authorization` header. It lists no `authorization_servers` (the MCP authorization
 * spec asks for one, but no authorization server issues this token), so a client learns that a
 * bearer token is needed and that it must be configured, not obtained through OAuth.
 */
export function protectedResourceMetadata(resource: string, name: string): object {
  return {
    resource,
    resource_name: name,
    bearer_methods_supported: ['header'],
  };
}
