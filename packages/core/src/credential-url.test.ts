import { describe, expect, it } from 'vitest';
import { urlCredentialParts, urlWithoutCredentials } from './credential-url.js';

describe('urlWithoutCredentials', () => {
  it('hides a password and the query values that hold credentials, and keeps the rest', () => {
    expect(
      urlWithoutCredentials(
        'https://me:hunter2-secret@api.example.com/spec.json?api_key=k-123456&v=2',
      ),
    ).toBe('https://me:***@api.example.com/spec.json?api_key=***&v=2');
    for (const name of [
      'token',
      'access_token',
      'apikey',
      'key',
      'client_secret',
      'password',
      'sig',
      'X-Amz-Signature',
    ])
      expect(urlWithoutCredentials(`https://h.example/x?${name}=abcdef123456&page=3`)).toBe(
        `https://h.example/x?${name}=***&page=3`,
      );
  });

  it('hides a value shaped like a key whatever its name', () => {
    const key = `sk-proj-${'a1B2c3D4'.repeat(6)}`;
    expect(urlWithoutCredentials(`https://h.example/spec?q=${key}`)).toBe(
      'https://h.example/spec?q=***',
    );
  });

  it('gives back unchanged what holds nothing secret, and text that is no URL', () => {
    for (const text of ['https://h.example/a%20b?page=2&sort=asc', './spec.yaml', 'not a url', ''])
      expect(urlWithoutCredentials(text)).toBe(text);
  });
});

describe('urlCredentialParts', () => {
  it('finds the password and the credential query values, as written and decoded', () => {
    expect(
      urlCredentialParts(
        'https://me:p%40ss-word9@h.example/x?api_key=k%2B123456&v=2&sig=abc123def',
      ),
    ).toEqual(['p%40ss-word9', 'p@ss-word9', 'k%2B123456', 'k+123456', 'abc123def']);
  });

  it('finds a URL inside a longer value (a JDBC string) and keeps ordinary parameters out', () => {
    expect(
      urlCredentialParts('jdbc:postgresql://db/x?user=app&password=hunter2-99&sslmode=require'),
    ).toEqual(['hunter2-99']);
    expect(urlCredentialParts('https://h.example/a?page=2&api-version=2024-10-21')).toEqual([]);
    expect(urlCredentialParts('not a url, ?key=abcdef123456 alone')).toEqual([]);
  });

  it('gives nothing for a long run of scheme characters with no URL', () => {
    expect(urlCredentialParts(`${'a1+.-'.repeat(40_000)}:x`)).toEqual([]);
  });
});
