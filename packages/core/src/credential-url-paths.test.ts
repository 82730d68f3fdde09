import { describe, expect, it } from 'vitest';
import { credentialRedactor, isCredentialVariable } from './credential-environment.js';
import { urlCredentialParts, urlWithoutCredentials } from './credential-url.js';

// Shapes of the services' documented URLs; the keys are made up.
const keyed: [name: string, url: string, key: string][] = [
  [
    'Slack incoming webhook',
    'https://hooks.slack.com/services/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',
    'q8Rz3kLm9XwP2vNt7YbC4dJe',
  ],
  [
    'Discord webhook',
    'https://discord.com/api/webhooks/123456789012345678/Zx9_kL2mN8pQ4rS6tU0vW3yA5bC7dE1fG9hJ2kL4mN6pQ8rS0tU3vW5yA7bC9dE1f',
    'Zx9_kL2mN8pQ4rS6tU0vW3yA5bC7dE1fG9hJ2kL4mN6pQ8rS0tU3vW5yA7bC9dE1f',
  ],
  [
    'Telegram bot API',
    'https://api.telegram.org/bot7012345678:AAHq3Lm9Xw_P2vNt7YbC4dJe8Rz0kQ5sT1u/sendMessage',
    '7012345678:AAHq3Lm9Xw_P2vNt7YbC4dJe8Rz0kQ5sT1u',
  ],
  ['Zapier catch hook', 'https://hooks.zapier.com/hooks/catch/1234567/3kz9q1x/', '3kz9q1x'],
  [
    'IFTTT maker key',
    'https://maker.ifttt.com/trigger/door_open/with/key/dK3mZ9qL2xW8pN4vT7yB1c',
    'dK3mZ9qL2xW8pN4vT7yB1c',
  ],
  [
    'n8n production webhook',
    'https://automation.example.com/webhook/4f2a9c1e-7b3d-4e8f-a6c5-2d1b0e9f8a7c',
    '4f2a9c1e-7b3d-4e8f-a6c5-2d1b0e9f8a7c',
  ],
  [
    'a key in any API path (mixed case and digits)',
    'https://api.example.com/v1/Xk9mP2qL7vN4tR8wZ3yB/send',
    'Xk9mP2qL7vN4tR8wZ3yB',
  ],
  [
    'a hex key in any API path',
    'https://notify.example.net/api/5f4dcc3b5aa765d61d8327deb882cf99aa/push?to=me',
    '5f4dcc3b5aa765d61d8327deb882cf99aa',
  ],
  [
    'Mattermost incoming hook',
    'https://chat.example.org/hooks/xq7h3k9m2p8w4z6n1r5t0y3b9c',
    'xq7h3k9m2p8w4z6n1r5t0y3b9c',
  ],
];

describe('keys in a URL path', () => {
  it.each(keyed)('%s: the variable is a credential, whatever its name', (_, url) => {
    expect(isCredentialVariable('NOTIFY_URL', url)).toBe(true);
    expect(isCredentialVariable('ENDPOINT', `curl -X POST ${url}`)).toBe(true);
  });

  it.each(keyed)('%s: shown without its key, the rest kept', (_, url, key) => {
    const shown = urlWithoutCredentials(url);
    expect(shown).not.toContain(key);
    expect(shown).toContain('***');
    expect(shown.startsWith(url.slice(0, url.indexOf('/', 8)))).toBe(true);
  });

  it.each(keyed)('%s: the key alone is a part a redactor replaces', (_, url, key) => {
    expect(urlCredentialParts(`posting to ${url} failed`)).toContain(key);
    const redact = credentialRedactor({ NOTIFY_URL: url });
    // A server quoting only the path it was sent still shows no key.
    const quoted = `404 Not Found: ${new URL(url).pathname}`;
    const out = redact(quoted);
    if (key.length >= 8 && /[0-9]/.test(key) && /[A-Za-z]/.test(key)) {
      expect(out).not.toContain(key);
      expect(out).toContain('[redacted:NOTIFY_URL]');
    }
    expect(redact(`POST ${url}`)).toBe('POST [redacted:NOTIFY_URL]');
  });

  it('a Telegram bot token on its own is a credential', () => {
    expect(isCredentialVariable('BOT', '7012345678:AAHq3Lm9Xw_P2vNt7YbC4dJe8Rz0kQ5sT1u')).toBe(
      true,
    );
  });

  it.each([
    'https://github.com/acme/widgets/commit/9f8e7d6c5b4a39281706f5e4d3c2b1a098765432',
    'https://docs.example.com/guide/webhooks/setting-up',
    'https://example.com/hooks/',
    'https://hooks.slack.com/',
    'https://api.telegram.org/',
    '/home/me/project/.git/hooks/pre-commit-2024-backup',
    'https://registry.npmjs.org/@agent/core/-/core-1.2.3.tgz',
    'https://api.example.com/items/4f2a9c1e-7b3d-4e8f-a6c5-2d1b0e9f8a7c',
    'https://storage.example.com/reports/AnnualReport2024FinalVersion.pdf',
    'https://gitlab.com/group/project/-/pipelines/1234567890',
    'https://api.example.com/v2/users/JaneDoe/RepositoriesAndStars',
  ])('%s holds no key', (url) => {
    expect(isCredentialVariable('SOME_SETTING', url)).toBe(false);
    expect(urlWithoutCredentials(url)).toBe(url);
  });

  it.each([
    ['a long path of hook-like segments', `https://h/${'hooks/'.repeat(20_000)}x`],
    // Read from every letter, a scheme took quadratic time: 100 kB of letters, 6.7 s.
    ['a long word that could start a scheme anywhere', 'a1+'.repeat(200_000)],
    ['a long run of schemes', 'a://'.repeat(100_000)],
    ['a long key-like segment that is a file name', `https://h/a/${'aB1'.repeat(100_000)}.pdf`],
    [
      'many key-like segments that are file names',
      `https://h/${'aB1aB1aB1aB1aB1aB1aB1x.js/'.repeat(20_000)}`,
    ],
  ])('stays linear on %s', (_, long) => {
    expect(isCredentialVariable('X', long)).toBe(false);
    expect(urlWithoutCredentials(long)).toBe(long);
  });
});
