// secretHider: a credential is hidden whatever its length; one of fewer than 6 characters only
// where it stands alone, so ordinary words that contain it keep their letters.
import { describe, expect, it } from 'vitest';
import { secretHider } from './secret-echo.js';

const marker = '[redacted:key]';
const hider = (value: string) => secretHider([{ value, label: 'key' }]);

describe('a short secret (under 6 characters)', () => {
  it.each([
    ['alone', 'k3y9', marker],
    ['in a query', 'GET /x?key=k3y9&page=2', `GET /x?key=${marker}&page=2`],
    ['quoted in JSON', '{"x-api-key":"k3y9"}', `{"x-api-key":"${marker}"}`],
    ['after Bearer', 'Authorization: Bearer k3y9', `Authorization: Bearer ${marker}`],
    ['at a line end', 'key:\nk3y9\n', `key:\n${marker}\n`],
    ['twice', 'k3y9 then k3y9.', `${marker} then ${marker}.`],
    ['between punctuation', '(k3y9)[k3y9]<k3y9>', `(${marker})[${marker}]<${marker}>`],
    ['after a hyphen', 'token-k3y9', `token-${marker}`],
  ])('is hidden %s', (_, text, expected) => {
    expect(hider('k3y9')(text)).toBe(expected);
  });

  it.each([
    ['inside a longer word', 'k3y9x and xk3y9 and xk3y9x'],
    ['joined by an underscore', 'k3y9_backup and old_k3y9'],
    ['next to a letter outside ASCII', 'ék3y9 and k3y9ü'],
    ['next to a digit', '1k3y9 and k3y92'],
  ])('is kept %s (a false hit would mangle the text)', (_, text) => {
    expect(hider('k3y9')(text)).toBe(text);
  });

  it('a PIN inside a longer number is kept; alone it is hidden', () => {
    expect(hider('1234')('port 12345, id 41234, pin 1234.')).toBe(
      `port 12345, id 41234, pin ${marker}.`,
    );
  });

  it('one character is still hidden alone, never inside words', () => {
    expect(hider('x')('x marks the spot: "x", box, xylophone')).toBe(
      `${marker} marks the spot: "${marker}", box, xylophone`,
    );
  });

  it.each(['a.b', '$1', '(x)', 'a|b', 'a-b', '[^]', 'a\\d', '*+?'])(
    'regular-expression characters in %j are matched literally',
    (value) => {
      expect(hider(value)(`say ${value} now`)).toBe(`say ${marker} now`);
      expect(hider(value)('nothing here: abcd 1 xx')).toBe('nothing here: abcd 1 xx');
    },
  );

  it('its URL-encoded and JSON-escaped forms too', () => {
    expect(hider('a b"')('q=a%20b%22 and "a b\\""')).toBe(`q=${marker} and "${marker}"`);
  });

  it('a marker holding "$&" is inserted as it is', () => {
    const hide = secretHider([{ value: 'pin9', label: '$& header' }]);
    expect(hide('pin9')).toBe('[redacted:$& header]');
  });
});

describe('a long secret (6 characters or more)', () => {
  it('is hidden anywhere, even inside a word', () => {
    expect(hider('s3cret99')('xs3cret99x and s3cret99')).toBe(`x${marker}x and ${marker}`);
  });

  it('an empty value hides nothing', () => {
    expect(secretHider([{ value: '', label: 'key' }])('text')).toBe('text');
  });
});
