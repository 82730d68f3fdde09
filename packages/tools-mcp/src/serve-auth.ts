/**
 * The bearer token of `serveHttp`: generated, or read from a file only its owner can read, and
 * checked in constant time. A static token handed out of band, not MCP's OAuth authorization: the
 * protected-resource metadata names no authorization server, because there is none.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { AgentError, errorMessage } from '@agent/core';

/**
 * How `serveHttp` authenticates requests: clients must send `Authorization: Bearer <token>`, or
 * (`'none'`) anyone who can reach the port may call the tools.
 */
export type HttpServeAuth = { token: string } | 'none';

/** RFC 6750's `b64token`: what fits in an `Authorization: Bearer` header as is. */
const tokenSyntax = /^[A-Za-z0-9\-._~+/]+=*$/;
/** 32 characters: 128 bits as hex, more as base64. */
const minimumTokenLength = 32;
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
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: a FIFO put in its place must not hang the server's start.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return fail(`cannot be opened: ${errorMessage(error)}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) fail('is not a regular file');
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid)
      fail(`belongs to uid ${info.uid}, not to this user (uid ${uid}): it must be yours`);
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0)
      fail(
        `can be read or written by others (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}): run chmod 600 ${path}`,
      );
    if (info.size > maximumTokenFileBytes)
      fail(`is ${info.size} bytes: a token file holds one token`);
    const token = (await handle.readFile('utf8')).trim();
    if (token === '') fail('is empty');
    assertBearerToken(token, `The token in ${path}`);
    return token;
  } finally {
    await handle.close();
  }
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
