import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  credentialFreeEnvironment,
  credentialRedactor,
  credentialStreamRedactor,
  isCredentialVariable,
  withheldVariableNames,
} from './credential-environment.js';

// The filter over random environments: what it keeps is a sub-record of its input with no
// credential left except the passed ones; any name built around a credential word, in any case
// and with any neighbours, is withheld; a key in a known format is withheld under any name and
// inside any value; the redactor leaves no credential value of a saved text behind.

const wordArb = fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,7}$/);
const separatorArb = fc.constantFrom('_', '-', '.');
const envArb = fc.dictionary(
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/),
  fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  { maxKeys: 20 },
);

/** A name with `core` as one of its words: `prefix_CORE_suffix`, parts optional, any case. */
const nameAround = (core: fc.Arbitrary<string>) =>
  fc
    .tuple(
      fc.option(wordArb, { nil: undefined }),
      separatorArb,
      core,
      separatorArb,
      fc.option(wordArb, { nil: undefined }),
      fc.constantFrom<'upper' | 'lower' | 'as-is'>('upper', 'lower', 'as-is'),
    )
    .map(([prefix, left, word, right, suffix, casing]) => {
      const name = `${prefix === undefined ? '' : `${prefix}${left}`}${word}${suffix === undefined ? '' : `${right}${suffix}`}`;
      return casing === 'upper'
        ? name.toUpperCase()
        : casing === 'lower'
          ? name.toLowerCase()
          : name;
    });

const keyCharacters = fc.stringMatching(/^[A-Za-z0-9]{60}$/).map((text) => `${text}7`);
const keyArb = fc.oneof(
  keyCharacters.map((body) => `sk-proj-${body}`),
  keyCharacters.map((body) => `sk-ant-api03-${body}`),
  keyCharacters.map((body) => `ghp_${body.slice(0, 36)}`),
  keyCharacters.map((body) => `github_pat_${body.slice(0, 30)}`),
  keyCharacters.map((body) => `xoxb-${body.slice(0, 20)}`),
  fc.stringMatching(/^[A-Z0-9]{16}$/).map((body) => `AKIA${body}`),
  keyCharacters.map((body) => `AIza${body.slice(0, 35)}`),
  keyCharacters.map((body) => `glpat-${body.slice(0, 20)}`),
  keyCharacters.map((body) => `npm_${body.slice(0, 36)}`),
  keyCharacters.map((body) => `hf_${body.slice(-34)}`),
  fc
    .tuple(wordArb, wordArb)
    .map(([user, password]) => `postgresql://${user}:${password}@db.internal:5432/app`),
);
// What may stand next to a key in a value: nothing, or a character no key format continues with.
const surroundingArb = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 10 }).map((text) => `${text} `),
  fc.constantFrom('--token=', 'Authorization: ', '"', "'", ',', ':', '='),
);

describe('credentialFreeEnvironment (properties)', () => {
  it('keeps a sub-record of its input in which only passed names hold credentials', () => {
    fc.assert(
      fc.property(envArb, fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), (env, pass) => {
        const result = credentialFreeEnvironment(env, { pass });
        for (const [name, value] of Object.entries(result)) {
          expect(env[name]).toBe(value);
          if (!pass.includes(name)) expect(isCredentialVariable(name, value)).toBe(false);
        }
        // Nothing is lost but what is withheld.
        const withheld = new Set(withheldVariableNames(env, { pass }));
        for (const [name, value] of Object.entries(env))
          if (value !== undefined) expect(name in result || withheld.has(name)).toBe(true);
        // Filtering twice changes nothing more.
        expect(credentialFreeEnvironment(result, { pass })).toEqual(result);
      }),
    );
  });

  it('withholds every name built around a credential word, in any case', () => {
    const coreArb = fc.oneof(
      fc.constantFrom('API_KEY', 'APIKEY', 'KEY', 'ACCESS_KEY', 'PRIVATEKEY', 'KEYS'),
      fc.constantFrom('TOKEN', 'AUTH_TOKEN', 'ACCESSTOKEN', 'PAT', 'CREDS'),
      fc.constantFrom('SECRET', 'CLIENTSECRET', 'SECRETS', 'PASSWORD', 'PASSWD', 'PASS'),
      fc.constantFrom('PASSPHRASE', 'CREDENTIALS', 'COOKIE', 'WEBHOOK', 'AUTHORIZATION'),
    );
    fc.assert(
      fc.property(nameAround(coreArb), fc.string({ maxLength: 20 }), (name, value) => {
        expect(credentialFreeEnvironment({ [name]: value, PATH: '/bin' })).toEqual({
          PATH: '/bin',
        });
      }),
    );
  });

  it('withholds a key in a known format under any name, wherever it is in the value', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z][A-Z0-9]{0,11}$/),
        surroundingArb,
        keyArb,
        surroundingArb.map((text) => [...text].reverse().join('')),
        (name, left, key, right) => {
          expect(isCredentialVariable(name, `${left}${key}${right}`)).toBe(true);
        },
      ),
    );
  });

  it('passes a named credential with its value unchanged', () => {
    fc.assert(
      fc.property(nameAround(fc.constant('API_KEY')), keyArb, (name, key) => {
        expect(credentialFreeEnvironment({ [name]: key }, { pass: [name] })).toEqual({
          [name]: key,
        });
      }),
    );
  });
});

describe('credentialRedactor (properties)', () => {
  it('leaves no credential value in a text, JSON or not', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[A-Z]{1,6}_(TOKEN|SECRET|API_KEY)$/), keyArb, {
          minKeys: 1,
          maxKeys: 4,
        }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 6 }),
        (env, noise) => {
          const values = Object.values(env);
          const text = noise
            .map((part, index) => `${part}${values[index % values.length]}`)
            .join('');
          const redact = credentialRedactor(env);
          const plain = redact(text);
          const json = redact(JSON.stringify({ text }));
          for (const value of values) {
            expect(plain).not.toContain(value);
            expect(json).not.toContain(value);
          }
        },
      ),
    );
  });

  it('changes nothing in a text that holds no credential value', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const key = `sk-proj-${'Qx7'.repeat(20)}`;
        fc.pre(!text.includes(key));
        expect(credentialRedactor({ OPENAI_API_KEY: key })(text)).toBe(text);
      }),
    );
  });
});

describe('credentialStreamRedactor', () => {
  const env = {
    OPENAI_API_KEY: `sk-proj-${'Ab3'.repeat(16)}`,
    GITHUB_TOKEN: 'gh-token-value-1234',
    // One value a prefix of another's middle: the longest is redacted whole.
    MY_SECRET: 'abcXYZ-secret-1',
    OTHER_PASSWORD: 'XYZ-secret-2-long',
  };
  const values = Object.values(env);
  const pieceArb = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(...values),
    fc.constantFrom(...values).map((value) => value.slice(0, 5)),
  );

  it('split anywhere, the pieces shown hold no value, and add up to the whole text redacted', () => {
    fc.assert(
      fc.property(
        fc.array(pieceArb, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (parts, cuts) => {
          const text = parts.join('');
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort(
            (a, b) => a - b,
          );
          const pieces: string[] = [];
          let from = 0;
          for (const point of points) {
            pieces.push(text.slice(from, point));
            from = point;
          }
          pieces.push(text.slice(from));
          const redactor = credentialStreamRedactor(env);
          const shown = [...pieces.map((piece) => redactor.push(piece)), redactor.flush()];
          // No value in any piece shown, nor across neighbouring pieces.
          const joined = shown.join('');
          for (const value of values) expect(joined).not.toContain(value);
          expect(joined).toBe(credentialRedactor(env)(text));
        },
      ),
    );
  });

  it('text that holds no part of a value passes at once', () => {
    const redactor = credentialStreamRedactor(env);
    expect(redactor.push('Hello, world.')).toBe('Hello, world.');
    expect(redactor.push(' The key is sk-pr')).toBe(' The key is ');
    expect(redactor.push(`oj-${'Ab3'.repeat(16)} ok`)).toBe('[redacted:OPENAI_API_KEY] ok');
    expect(redactor.push(' sk-')).toBe(' ');
    expect(redactor.flush()).toBe('sk-');
  });
});
