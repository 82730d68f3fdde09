import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { credentialRuleOf, isCredentialVariable } from './credential-environment.js';
import { looksLikeRandomSecret } from './credential-random-value.js';
import {
  harmlessVariables,
  keysUnderIdNames,
  namedIdVariables,
  randomButHarmlessVariables,
  secretsInPieces,
  unknownFormatSecrets,
} from './credential-random-value.samples.js';

const named = (list: readonly (readonly [string, string])[]) =>
  list.map(([name, value]) => `${name}=${value}`);

describe('a key of no known format (the random-value rule)', () => {
  it('keeps every variable of the real environments sampled', () => {
    expect(
      named(harmlessVariables.filter(([name, value]) => isCredentialVariable(name, value))),
    ).toEqual([]);
    expect(harmlessVariables.length).toBeGreaterThan(250);
  });

  it('withholds keys of formats no other rule knows, under names no rule knows — by this rule alone', () => {
    expect(
      named(
        unknownFormatSecrets.filter(
          ([name, value]) => credentialRuleOf(name, value)?.id !== 'random-value',
        ),
      ),
    ).toEqual([]);
  });

  it('keeps ids under names that say so — a UUID, hex groups, a ULID: not withheld, not redacted', () => {
    expect(
      named(namedIdVariables.filter(([name, value]) => isCredentialVariable(name, value))),
    ).toEqual([]);
    fc.assert(
      fc.property(
        fc.uuid(),
        fc.constantFrom('AZURE_TENANT_ID', 'LaunchInstanceID', 'REQUEST_UUID', 'guid', 'runId'),
        (id, name) =>
          !isCredentialVariable(name, id) && !isCredentialVariable(name, id.toUpperCase()),
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it('still withholds a key under an id name: one 40- or 64-hex group (an old GitHub token), or no id form', () => {
    expect(
      named(keysUnderIdNames.filter(([name, value]) => !isCredentialVariable(name, value))),
    ).toEqual([]);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/),
        fc.constantFrom('APP_ID', 'CLIENT_UUID', 'guid'),
        (hex, name) => isCredentialVariable(name, hex) || !/[a-f]/.test(hex) || !/\d/.test(hex),
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it('reads a list or words piece by piece: user:key, a=b,key=…, --flag key, and base64 that starts with /', () => {
    expect(
      named(secretsInPieces.filter(([name, value]) => !isCredentialVariable(name, value))),
    ).toEqual([]);
    // Each piece alone would be withheld: the whole value is withheld for it, by this rule.
    for (const [name, value] of secretsInPieces)
      expect(credentialRuleOf(name, value)?.id, name).toBe('random-value');
  });

  it('withholds the random ids that are no secret (the cost, named in the CLI’s notice)', () => {
    expect(
      named(
        randomButHarmlessVariables.filter(([name, value]) => !isCredentialVariable(name, value)),
      ),
    ).toEqual([]);
  });

  it('catches random keys of every common alphabet (seeded: the README’s figures)', () => {
    const alphabets = {
      hex: '0123456789abcdef',
      base32: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567',
      base62: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
      base64: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
      'small letters and digits': 'abcdefghijklmnopqrstuvwxyz0123456789',
    };
    // A fixed generator (xorshift): the same keys every run.
    let state = 0x9e3779b9;
    const next = (bound: number) => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % bound;
    };
    const rates: Record<string, number> = {};
    for (const [alphabet, characters] of Object.entries(alphabets))
      for (const length of [16, 24, 32, 40]) {
        let caught = 0;
        for (let round = 0; round < 1000; round++) {
          let key = '';
          for (let index = 0; index < length; index++) key += characters[next(characters.length)];
          if (looksLikeRandomSecret('X', key)) caught++;
        }
        rates[`${alphabet} ${length}`] = caught / 10;
      }
    // The README gives these rates; the bounds are a little under them.
    for (const alphabet of Object.keys(alphabets))
      expect(rates[`${alphabet} 32`]).toBeGreaterThanOrEqual(95);
    expect(rates['hex 40']).toBeGreaterThanOrEqual(99);
    expect(rates['base62 24']).toBeGreaterThanOrEqual(95);
  });

  it('never withholds a path, words joined by separators, or a digest named as one', () => {
    const word = fc.stringMatching(/^[a-z]{1,10}$/);
    const versioned = fc.tuple(word, fc.integer({ min: 0, max: 999 })).map(([w, n]) => `${w}${n}`);
    const segment = fc.oneof(word, versioned);
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/), { minLength: 1, maxLength: 6 }),
        (segments) => !looksLikeRandomSecret('X', `/${segments.join('/')}`),
      ),
      { seed: 7, numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 2, maxLength: 6 }),
        fc.constantFrom('-', '_', '.'),
        fc.boolean(),
        (parts, separator, capitalised) => {
          const words = capitalised
            ? parts.map((part) => part.charAt(0).toUpperCase() + part.slice(1))
            : parts;
          return !looksLikeRandomSecret('X', words.join(separator));
        },
      ),
      { seed: 7, numRuns: 1000 },
    );
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/),
        fc.constantFrom(
          'GITHUB_SHA',
          'CI_COMMIT_SHA',
          'GIT_COMMIT',
          'PYTHON_SHA256',
          'BUILD_SOURCEVERSION',
          'COMMIT_REF',
          'TURBO_HASH',
        ),
        (digest, name) => !isCredentialVariable(name, digest),
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it('withholds any UUID, and a random key wherever it sits in one token (a prefix, a suffix)', () => {
    fc.assert(
      fc.property(fc.uuid(), (id) => looksLikeRandomSecret('X', id)),
      { seed: 7, numRuns: 200 },
    );
    expect(looksLikeRandomSecret('X', 'live_9f2c4e6a8b0d1f3a5c7e9b2d')).toBe(true);
    expect(looksLikeRandomSecret('X', 'q7Rk2ZpX9vLm4TnW8bYc.prod')).toBe(true);
  });

  it('answers on a megabyte-long value', () => {
    // No wall-clock bound here (run105 under CI's load took 3.8 s for what takes well under one
    // quiet; speed belongs in the bench): a backtracking blow-up would hang past the test's timeout.
    expect(looksLikeRandomSecret('X', 'aB1-'.repeat(250_000))).toBe(false);
    expect(looksLikeRandomSecret('X', 'q7Rk2ZpX9vLm4TnW'.repeat(60_000))).toBe(true);
  });
});
