import { describe, expect, it } from 'vitest';
import { urlWithoutCredentials } from './credential-url.js';

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
