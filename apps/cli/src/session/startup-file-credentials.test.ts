// Keys kept in shell startup files: `export OPENAI_API_KEY=…` in ~/.bashrc, fish's `set -gx`, a
// file of ~/.bashrc.d, `~/.profile`'s `DB_PASSWORD=…`, a bearer token in an alias. The CLI
// withheld the variables from the tools, but a sandboxed `cat ~/.bashrc` (and read_file, in a
// workspace that is the home) gave every one to the model — also those the CLI's environment
// never held. Now the sandbox shows the files as copies with `***` (a shell still sources the
// rest) and tool results are redacted of them. Real CLI processes, a scripted model, bubblewrap;
// as root and as nobody.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anyUserDirectory, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeSession } from '../testing/probe-session.js';
import { assertBuilt, testUsers } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const openaiKey = `sk-proj-${'Bq7r'.repeat(10)}`;
const anthropicKey = `sk-ant-api03-${'Fz4k'.repeat(10)}`;
const hfToken = `hf_${'Lm8nQ'.repeat(7)}`;
const aliasToken = `ghp_${'Al1s'.repeat(9)}`;
const dbPassword = 'Hunter2-Startup-Pass';
const secrets = [openaiKey, anthropicKey, hfToken, aliasToken, dbPassword];

/** A home whose startup files hold keys, beside settings a shell needs. */
function homeWithKeys(home: string): void {
  mkdirSync(join(home, '.config', 'fish'), { recursive: true });
  mkdirSync(join(home, '.bashrc.d'), { recursive: true });
  writeFileSync(
    join(home, '.bashrc'),
    [
      'export PATH="$HOME/bin:$PATH"',
      `export OPENAI_API_KEY="${openaiKey}"`,
      'export GITHUB_TOKEN=$(gh auth token 2>/dev/null)',
      `alias gh-api='curl -H "Authorization: Bearer ${aliasToken}"'`,
      'export MY_SETTING=kept-as-it-is',
      'for f in ~/.bashrc.d/*; do . "$f"; done',
      '',
    ].join('\n'),
  );
  writeFileSync(join(home, '.bashrc.d', 'tokens.sh'), `export HF_TOKEN=${hfToken}\n`);
  writeFileSync(
    join(home, '.config', 'fish', 'config.fish'),
    `set -gx ANTHROPIC_API_KEY ${anthropicKey}\n`,
  );
  writeFileSync(join(home, '.profile'), `DB_PASSWORD='${dbPassword}'\nexport DB_PASSWORD\n`);
}

describe.each(testUsers)('keys in shell startup files, as $label', ({ uid }) => {
  it('are neither shown to sandboxed commands nor in the file tools’ results', async (context) => {
    skipWithout('bwrap')(context);
    const dir = anyUserDirectory('agent-cli-startup-keys-');
    cleanups.push(() => dir.dispose());
    const home = join(dir.path, 'home');
    homeWithKeys(home);
    const before = readFileSync(join(home, '.bashrc'), 'utf8');
    const { seen, conversation } = await probeSession({
      uid,
      dir: dir.path,
      // The workspace is the home: the file tools reach the startup files too.
      workspace: home,
      home,
      commands: [
        'cat ~/.bashrc ~/.bashrc.d/tokens.sh ~/.config/fish/config.fish ~/.profile',
        'base64 -w0 ~/.bashrc; echo',
        // A shell still reads the copy.
        'bash -ic \'echo "setting=$MY_SETTING"\'',
      ],
      calls: [
        { id: 'bashrc', name: 'read_file', arguments: { path: '.bashrc' } },
        { id: 'fish', name: 'read_file', arguments: { path: '.config/fish/config.fish' } },
        { id: 'search', name: 'search', arguments: { pattern: 'KEY|TOKEN|PASS', path: '.' } },
      ],
    });
    expect(secrets.filter((secret) => seen.includes(secret))).toEqual([]);
    expect(secrets.filter((secret) => conversation.includes(secret))).toEqual([]);
    expect(seen).toContain('export OPENAI_API_KEY="***"');
    expect(seen).toContain('set -gx ANTHROPIC_API_KEY ***');
    expect(seen).toContain('export GITHUB_TOKEN=$(gh auth token 2>/dev/null)');
    expect(seen).toContain('setting=kept-as-it-is');
    expect(conversation).toMatch(/\[redacted:~\/\.bashrc secret \d+\]/);
    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe(before);
  });
});
