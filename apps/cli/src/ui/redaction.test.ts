// The session file's writer redacts while it serialises (no copies of a long session): it must
// give exactly what redacting a copy and serialising it gave.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { redactedJsonText, redactJson, resetRedaction } from './redaction.js';

const secret = 'sk-live-9f8e7d6c5b4a39281706f5e4';

afterEach(() => {
  delete process.env.AGENT_REDACTION_TEST_API_KEY;
  resetRedaction();
});

describe('redactedJsonText', () => {
  it('redacts values and keys holding a credential of the environment, in place', () => {
    process.env.AGENT_REDACTION_TEST_API_KEY = secret;
    resetRedaction();
    const value = {
      messages: [{ role: 'user', content: `my key is ${secret}` }],
      [`header ${secret}`]: { nested: [secret, 1, null, true] },
    };
    const text = redactedJsonText(value, 2);
    expect(text).not.toContain(secret);
    expect(JSON.parse(text)).toEqual({
      messages: [{ role: 'user', content: 'my key is [redacted:AGENT_REDACTION_TEST_API_KEY]' }],
      'header [redacted:AGENT_REDACTION_TEST_API_KEY]': {
        nested: ['[redacted:AGENT_REDACTION_TEST_API_KEY]', 1, null, true],
      },
    });
    // The value itself is left as it was.
    expect(value.messages[0]?.content).toContain(secret);
  });

  it('gives what serialising a redacted copy gave, for any JSON', () => {
    process.env.AGENT_REDACTION_TEST_API_KEY = secret;
    resetRedaction();
    const withSecret = fc.oneof(
      fc.string(),
      fc.constant(secret),
      fc.string().map((s) => `${s}${secret}`),
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        withSecret,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value')),
        fc.dictionary(withSecret, tie('value')),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        expect(redactedJsonText(value, 2)).toBe(JSON.stringify(redactJson(value), null, 2));
      }),
    );
  });
});
