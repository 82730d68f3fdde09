import { describe, expect, it } from 'vitest';
import { isCredentialHeader } from './credential-headers.js';

describe('isCredentialHeader', () => {
  it.each([
    // Named as keys, or a value of a known shape.
    ['Authorization', 'Bearer abc'],
    ['X-Api-Key', 'acme'],
    ['X-Anything', 'ghp_0123456789abcdefABCDEF0123456789'],
    // Named as nothing in particular: a value that reads as a key.
    ['X-Honeycomb-Team', 'hcxik_01hq3z5w8k2m4n6p8r0t2v4x6z'],
    ['X-Honeycomb-Team', 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'],
    ['X-Session-Id', '3f2b8c1e-9d4a-4e7b-a1c2-5d6e7f8a9b0c'],
    ['Private-Token', 'xyz'],
  ])('%s: %s is a credential', (name, value) => {
    expect(isCredentialHeader(name, value)).toBe(true);
  });

  it.each([
    ['Accept', 'application/json'],
    ['Content-Type', 'application/vnd.api+json'],
    ['User-Agent', 'my-agent/1.2.3 (linux; x64) node/24'],
    ['X-Title', 'My App 2'],
    ['HTTP-Referer', 'https://example.com/app1'],
    ['anthropic-version', '2023-06-01'],
    ['X-GitHub-Api-Version', '2022-11-28'],
    ['OpenAI-Beta', 'assistants=v2'],
    ['MCP-Protocol-Version', '2025-06-18'],
    // Any other name, with a value that is not a key: a word, a short code, a date, a URL.
    ['X-Region', 'eu-west'],
    ['X-Tenant', 'engineering'],
    ['X-Org', 'acme-42'],
    ['X-Date', '2024-01-01T00:00:00Z'],
    ['X-Callback', 'https://example.com/hook1'],
    ['X-Note', 'two words 1234567890'],
  ])('%s: %s is not', (name, value) => {
    expect(isCredentialHeader(name, value)).toBe(false);
  });
});
